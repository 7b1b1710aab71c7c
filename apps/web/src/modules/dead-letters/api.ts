import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import { connectionName } from '../connections/utils/connection-name';
import { adminAttentionQuery } from '../shell/api';
import { type DeadLetterSearch, toLetterQuery } from './utils/dead-letter-search';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type DeadLetterPage = JsonOf<paths['/api/v1/dead-letters']['get']['responses'][200]>;
export type DeadLetter = DeadLetterPage['data'][number];
export type DeadLetterDetail = JsonOf<paths['/api/v1/dead-letters/{id}']['get']['responses'][200]>;
export type BulkResult = JsonOf<paths['/api/v1/dead-letters/bulk']['post']['responses'][200]>;
export type BulkAction = 'retry' | 'discard';
export type Connection = JsonOf<paths['/api/v1/connections']['get']['responses'][200]>['data'][number];

/** The most letters the API settles in one bulk request. */
export const MAX_BULK = 500;
const PAGE = 50;

export const deadLetterKeys = {
  all: ['dead-letters'] as const,
  list: (search: DeadLetterSearch) => ['dead-letters', 'list', search] as const,
  detail: (id: string) => ['dead-letters', 'detail', id] as const,
  connections: ['dead-letters', 'connections'] as const,
};

export const deadLettersQuery = (search: DeadLetterSearch) =>
  infiniteQueryOptions({
    queryKey: deadLetterKeys.list(search),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/dead-letters', {
          params: { query: { ...toLetterQuery(search), limit: PAGE, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: 15_000,
  });

/** A letter with its payload, read when its row is opened. */
export const deadLetterQuery = (id: string) =>
  queryOptions({
    queryKey: deadLetterKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/dead-letters/{id}', { params: { path: { id } }, signal })),
  });

/** The workspace's connections, to name a letter's and to filter by. */
export const letterConnectionsQuery = queryOptions({
  queryKey: deadLetterKeys.connections,
  queryFn: ({ signal }) => unwrap(api.GET('/api/v1/connections', { signal })),
  staleTime: 60_000,
});

/** "CRM A", else the provider and account. */
export function connectionLabel(connection: Connection): string {
  return connectionName(connection);
}

/**
 * The ids of every letter the search matches (up to MAX_BULK), paging the list: what "select
 * all N matching" selects.
 */
export async function allMatchingIds(search: DeadLetterSearch): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await unwrap(
      api.GET('/api/v1/dead-letters', {
        params: { query: { ...toLetterQuery(search), limit: 200, cursor } },
      }),
    );
    ids.push(...page.data.filter((letter) => letter.status === 'open').map((letter) => letter.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && ids.length < MAX_BULK);
  return ids.slice(0, MAX_BULK);
}

function useSettled() {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: deadLetterKeys.all });
    void client.invalidateQueries({ queryKey: adminAttentionQuery.queryKey });
  };
}

export function useRetryLetter() {
  const settled = useSettled();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/v1/dead-letters/{id}/retry', { params: { path: { id } } })),
    onSettled: settled,
  });
}

export function useDiscardLetter() {
  const settled = useSettled();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/v1/dead-letters/{id}/discard', { params: { path: { id } } })),
    onSettled: settled,
  });
}

export function useBulkLetters() {
  const settled = useSettled();
  return useMutation({
    mutationFn: ({ action, ids }: { action: BulkAction; ids: string[] }) =>
      unwrap(api.POST('/api/v1/dead-letters/bulk', { body: { action, ids } })),
    onSettled: settled,
  });
}
