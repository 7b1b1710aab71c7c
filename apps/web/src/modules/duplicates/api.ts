import {
  type InfiniteData,
  infiniteQueryOptions,
  type QueryClient,
  queryOptions,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query';
import { api, newIdempotencyKey, unwrap } from '../../api/client';
import { INBOX_COUNTS_KEY, LIST_KEY_PREFIX } from '../../api/live';
import type { paths } from '../../api/schema';
import { recordKeys } from '../records/api';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type DuplicatePage = JsonOf<paths['/api/v1/possible-duplicates']['get']['responses'][200]>;
export type Duplicate = DuplicatePage['data'][number];
export type Operation = JsonOf<paths['/api/v1/identity-operations/{operationId}']['get']['responses'][200]>;
export type MergeType = 'person' | 'company' | 'deal';

export const duplicateKeys = {
  all: ['possible-duplicates'] as const,
  open: () => ['possible-duplicates', 'open'] as const,
  detail: (id: string) => ['possible-duplicates', 'detail', id] as const,
  operation: (id: string) => ['identity-operation', id] as const,
};

/** The review queue, what most deserves a person's time first. */
export const openDuplicatesQuery = () =>
  infiniteQueryOptions({
    queryKey: duplicateKeys.open(),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/possible-duplicates', {
          params: { query: { status: 'open', sort: 'priority', limit: 50, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });

export const duplicateQuery = (id: string) =>
  queryOptions({
    queryKey: duplicateKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/possible-duplicates/{id}', { params: { path: { id } }, signal })),
  });

/** A merge that was accepted but not applied yet, read until it is. */
export const operationQuery = (id: string) =>
  queryOptions({
    queryKey: duplicateKeys.operation(id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/identity-operations/{operationId}', {
          params: { path: { operationId: id } },
          signal,
        }),
      ),
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? 1_000 : false),
  });

/** A decided pair leaves the open queue at once (the refetch confirms it). */
function dropFromQueue(client: QueryClient, pairId: string) {
  client.setQueryData<InfiniteData<DuplicatePage>>(duplicateKeys.open(), (data) =>
    data === undefined
      ? data
      : {
          ...data,
          pages: data.pages.map((page) => ({ ...page, data: page.data.filter((p) => p.id !== pairId) })),
        },
  );
}

function invalidateAfterIdentityChange(client: QueryClient, recordIds: readonly string[]) {
  void client.invalidateQueries({ queryKey: duplicateKeys.all });
  void client.invalidateQueries({ queryKey: INBOX_COUNTS_KEY });
  void client.invalidateQueries({ queryKey: LIST_KEY_PREFIX });
  for (const id of recordIds) void client.invalidateQueries({ queryKey: recordKeys.of(id) });
}

export function useDismissDuplicate() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/v1/possible-duplicates/{id}/dismiss', { params: { path: { id } } })),
    onSuccess: (_data, id) => {
      dropFromQueue(client, id);
      client.removeQueries({ queryKey: duplicateKeys.detail(id) });
      invalidateAfterIdentityChange(client, []);
    },
  });
}

export type MergeOutcome = { applied: true; operationId: string } | { applied: false; operationId: string };

export interface MergeVariables {
  /** The possible duplicate being decided. */
  pairId: string;
  type: MergeType;
  survivorId: string;
  absorbedId: string;
  /** One per intent (this pair, this survivor): a retry is the same merge. */
  idempotencyKey: string;
}

async function postMerge({ type, survivorId, absorbedId, idempotencyKey }: MergeVariables) {
  const init = {
    params: { path: { id: survivorId } },
    body: { absorbedId },
    headers: { 'Idempotency-Key': idempotencyKey },
  };
  switch (type) {
    case 'person':
      return api.POST('/api/v1/people/{id}/merge', init);
    case 'company':
      return api.POST('/api/v1/companies/{id}/merge', init);
    case 'deal':
      return api.POST('/api/v1/deals/{id}/merge', init);
  }
}

export function useMergeDuplicate() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (variables: MergeVariables): Promise<MergeOutcome> => {
      const { data, response } = await postMerge(variables);
      if (data !== undefined && 'accepted' in data) return { applied: false, operationId: data.operationId };
      const operationId = response.headers.get('operation-id');
      if (operationId === null) throw new Error('The merge answered without its Operation-Id.');
      return { applied: true, operationId };
    },
    onSuccess: (_outcome, variables) => {
      dropFromQueue(client, variables.pairId);
      invalidateAfterIdentityChange(client, [variables.survivorId, variables.absorbedId]);
    },
  });
}

export type UnmergeOutcome = { applied: boolean };

/** Undo of a merge; `idempotencyKey` is the same for retries of one Undo. */
export async function unmerge(
  client: QueryClient,
  operationId: string,
  idempotencyKey: string = newIdempotencyKey(),
): Promise<UnmergeOutcome> {
  const { data } = await api.POST('/api/v1/identity-operations/{operationId}/unmerge', {
    params: { path: { operationId } },
    headers: { 'Idempotency-Key': idempotencyKey },
  });
  const ids = data !== undefined && !('accepted' in data) ? [data.survivor.id, data.restored.id] : [];
  invalidateAfterIdentityChange(client, ids);
  return { applied: ids.length > 0 };
}
