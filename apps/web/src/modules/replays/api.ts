import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type ReplayPage = JsonOf<paths['/api/v1/replays']['get']['responses'][200]>;
export type Replay = ReplayPage['data'][number];
export type ReplayReport = NonNullable<Replay['report']>;
export type ReplayFrom = Replay['from'];
export type ReplayMode = Replay['mode'];

export const replayKeys = {
  all: ['replays'] as const,
  list: () => ['replays', 'list'] as const,
  detail: (id: string) => ['replays', 'detail', id] as const,
};

/** Still to finish: polled until it has. */
export const isUnderway = (replay: Pick<Replay, 'status'>): boolean =>
  replay.status === 'queued' || replay.status === 'running';

export const replaysQuery = () =>
  infiniteQueryOptions({
    queryKey: replayKeys.list(),
    queryFn: ({ pageParam, signal }) =>
      unwrap(api.GET('/api/v1/replays', { params: { query: { limit: 20, cursor: pageParam } }, signal })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    // A replay in the list moves on by itself: followed while one is underway.
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.data.some(isUnderway)) ? 2_000 : false,
  });

export const replayQuery = (id: string) =>
  queryOptions({
    queryKey: replayKeys.detail(id),
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/replays/{id}', { params: { path: { id } }, signal })),
    refetchInterval: (query) => (query.state.data && isUnderway(query.state.data) ? 1_000 : false),
  });

/** Asks for a replay; 202 answers it queued. A 409 `replay_running` names the one in the way. */
export function useStartReplay() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ from, mode }: { from: ReplayFrom; mode: ReplayMode }) =>
      unwrap(api.POST('/api/v1/replays', { body: { from, mode } })),
    onSuccess: (replay) => {
      client.setQueryData(replayKeys.detail(replay.id), replay);
      void client.invalidateQueries({ queryKey: replayKeys.list() });
    },
  });
}
