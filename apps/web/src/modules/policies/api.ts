import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import type { PolicyEntity, PolicyMap } from './utils/policy-draft';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type PolicySet = JsonOf<paths['/api/v1/policies/{entityType}']['get']['responses'][200]>;
export type RevisionPage = JsonOf<paths['/api/v1/policies/{entityType}/revisions']['get']['responses'][200]>;
export type Revision = RevisionPage['data'][number];

export const policyKeys = {
  all: ['policies'] as const,
  set: (entity: PolicyEntity) => ['policies', entity, 'set'] as const,
  revisions: (entity: PolicyEntity) => ['policies', entity, 'revisions'] as const,
  sources: () => ['policies', 'sources'] as const,
};

export const policySetQuery = (entity: PolicyEntity) =>
  queryOptions({
    queryKey: policyKeys.set(entity),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/policies/{entityType}', { params: { path: { entityType: entity } }, signal })),
  });

export const revisionsQuery = (entity: PolicyEntity) =>
  infiniteQueryOptions({
    queryKey: policyKeys.revisions(entity),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/policies/{entityType}/revisions', {
          params: { path: { entityType: entity }, query: { limit: 10, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });

/** The workspace's connections: the sources a priority order ranks, and how to name them. */
export const sourcesQuery = () =>
  queryOptions({
    queryKey: policyKeys.sources(),
    queryFn: async ({ signal }) => (await unwrap(api.GET('/api/v1/connections', { signal }))).data,
    staleTime: 30_000,
  });

export type SaveOutcome = { kind: 'saved'; set: PolicySet } | { kind: 'stale'; message: string };

/**
 * Replaces the type's set on the version the draft was made on (`If-Match`). A 412 is an
 * outcome, not an error: someone else saved first, and the page offers their version.
 */
export function useSavePolicies(entity: PolicyEntity) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ fields, version }: { fields: PolicyMap; version: number }): Promise<SaveOutcome> => {
      try {
        const set = await unwrap(
          api.PUT('/api/v1/policies/{entityType}', {
            params: { path: { entityType: entity } },
            body: { fields },
            headers: { 'If-Match': `"${version}"` },
          }),
        );
        return { kind: 'saved', set };
      } catch (error) {
        if (error instanceof ApiError && error.status === 412)
          return { kind: 'stale', message: error.message };
        throw error;
      }
    },
    onSuccess: (outcome) => {
      if (outcome.kind === 'saved') client.setQueryData(policyKeys.set(entity), outcome.set);
      void client.invalidateQueries({ queryKey: policyKeys.revisions(entity) });
    },
  });
}
