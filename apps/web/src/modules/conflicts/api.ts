import { type InfiniteData, infiniteQueryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { INBOX_COUNTS_KEY } from '../../api/live';
import type { paths } from '../../api/schema';
import { recordKeys } from '../records/api';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type ConflictPage = JsonOf<paths['/api/v1/conflicts']['get']['responses'][200]>;
export type Conflict = ConflictPage['data'][number];
export type Candidate = Conflict['candidates'][number];

export const conflictKeys = {
  all: ['conflicts'] as const,
  open: () => ['conflicts', 'open'] as const,
};

export const openConflictsQuery = () =>
  infiniteQueryOptions({
    queryKey: conflictKeys.open(),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/conflicts', {
          params: { query: { status: 'open', limit: 50, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });

export type ResolveOutcome = { settled: true } | { settled: false };

/**
 * Settles a conflict with the chosen value. The card leaves the inbox at once and comes
 * back (the page shows the error) when the API refuses; 202 means accepted, merged soon.
 */
export function useResolveConflict() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({
      conflict,
      value,
    }: {
      conflict: Conflict;
      value: unknown;
    }): Promise<ResolveOutcome> => {
      const { response } = await api.POST('/api/v1/conflicts/{id}/resolve', {
        params: { path: { id: conflict.id } },
        body: { value },
      });
      return { settled: response.status === 200 };
    },
    onMutate: async ({ conflict }) => {
      await client.cancelQueries({ queryKey: conflictKeys.open() });
      const before = client.getQueryData<InfiniteData<ConflictPage>>(conflictKeys.open());
      client.setQueryData<InfiniteData<ConflictPage>>(conflictKeys.open(), (data) =>
        data === undefined
          ? data
          : {
              ...data,
              pages: data.pages.map((page) => ({
                ...page,
                data: page.data.filter((item) => item.id !== conflict.id),
              })),
            },
      );
      return { before };
    },
    onError: (_error, _variables, context) => {
      if (context?.before !== undefined) client.setQueryData(conflictKeys.open(), context.before);
    },
    onSettled: (_data, _error, { conflict }) => {
      void client.invalidateQueries({ queryKey: conflictKeys.all });
      void client.invalidateQueries({ queryKey: INBOX_COUNTS_KEY });
      void client.invalidateQueries({ queryKey: recordKeys.of(conflict.recordId) });
    },
  });
}
