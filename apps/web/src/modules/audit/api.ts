import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import { type AuditSearch, toAuditQuery } from './utils/audit-search';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type AuditPage = JsonOf<paths['/api/v1/audit-log']['get']['responses'][200]>;
export type AuditEntry = AuditPage['data'][number];

export const auditKeys = {
  all: ['audit-log'] as const,
  list: (search: AuditSearch) => ['audit-log', 'list', search] as const,
  actors: ['audit-log', 'actors'] as const,
};

export const auditLogQuery = (search: AuditSearch) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(search),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/audit-log', {
          params: { query: { ...toAuditQuery(search), limit: 50, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });

/** Who can appear as an actor: the members and the API keys (revoked ones too). */
export const auditActorsQuery = queryOptions({
  queryKey: auditKeys.actors,
  queryFn: async ({ signal }) => {
    const [members, keys] = await Promise.all([
      unwrap(api.GET('/api/v1/members', { signal })),
      unwrap(api.GET('/api/v1/api-keys', { signal })),
    ]);
    return { members: members.data, keys: keys.data };
  },
  staleTime: 60_000,
});
