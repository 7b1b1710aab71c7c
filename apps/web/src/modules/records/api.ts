import {
  infiniteQueryOptions,
  type QueryClient,
  queryOptions,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import type { RecordType } from '../../lib/fields';
import { recordKeys } from './keys';

/**
 * The record page's data access: one key factory, the queries as queryOptions, and the
 * mutations (as Supabase's apps/studio/data/__templates/). Every key of one record starts
 * with `['record', id]`, so the live stream invalidates all of a record's reads at once.
 */

export type { RecordType };

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: infer R };
}
  ? JsonOf<R>
  : never;

export type RecordView = Ok<'/api/v1/people/{id}', 'get'>;
export type TimelinePage = Ok<'/api/v1/people/{id}/timeline', 'get'>;
export type TimelineItem = TimelinePage['data'][number];
export type TimelineType = TimelineItem['type'];
export type HistoryPage = Ok<'/api/v1/people/{id}/history', 'get'>;
export type HistoryEntry = HistoryPage['data'][number];
export type IdentityEvent = HistoryPage['identity'][number];
export type AsOfView = Ok<'/api/v1/people/{id}/as-of', 'get'>;
export type IdentityOperationPage = Ok<'/api/v1/identity-operations', 'get'>;
export type IdentityOperation = IdentityOperationPage['data'][number];
export type PersonInsights = Ok<'/api/v1/people/{id}/insights', 'get'>;
export type InsightCounts = PersonInsights['last7'];
export type InsightHolder = PersonInsights['heldBy'][number];
export type SourceLink = RecordView['sourceLinks'][number];
export type Association = RecordView['associations'][number];
export type OpenConflict = RecordView['openConflicts'][number];
export type Provenance = RecordView['provenance'][string];

/** The collection of each record type, as in the API's and the app's paths. */
export const RESOURCE_OF = { person: 'people', company: 'companies', deal: 'deals' } as const;

const PATHS = {
  person: {
    record: '/api/v1/people/{id}',
    timeline: '/api/v1/people/{id}/timeline',
    history: '/api/v1/people/{id}/history',
    asOf: '/api/v1/people/{id}/as-of',
  },
  company: {
    record: '/api/v1/companies/{id}',
    timeline: '/api/v1/companies/{id}/timeline',
    history: '/api/v1/companies/{id}/history',
    asOf: '/api/v1/companies/{id}/as-of',
  },
  deal: {
    record: '/api/v1/deals/{id}',
    timeline: '/api/v1/deals/{id}/timeline',
    history: '/api/v1/deals/{id}/history',
    asOf: '/api/v1/deals/{id}/as-of',
  },
} as const satisfies Record<RecordType, Record<string, keyof paths>>;

export const TIMELINE_TYPES = [
  'meeting',
  'email_activity',
  'task',
] as const satisfies readonly TimelineType[];

export { recordKeyPart, recordKeys } from './keys';

export const isApiError = (error: unknown, status?: number): error is ApiError =>
  error instanceof ApiError && (status === undefined || error.status === status);

export const recordQuery = (type: RecordType, id: string) =>
  queryOptions({
    queryKey: recordKeys.detail(type, id),
    queryFn: async ({ signal }) => unwrap(api.GET(PATHS[type].record, { params: { path: { id } }, signal })),
  });

export const asOfQuery = (type: RecordType, id: string, at: string) =>
  queryOptions({
    queryKey: recordKeys.asOf(type, id, at),
    queryFn: async ({ signal }) =>
      unwrap(api.GET(PATHS[type].asOf, { params: { path: { id }, query: { at } }, signal })),
  });

export const timelineQuery = (type: RecordType, id: string, types: readonly TimelineType[]) =>
  infiniteQueryOptions({
    queryKey: recordKeys.timeline(type, id, types),
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam, signal }) =>
      unwrap(
        api.GET(PATHS[type].timeline, {
          params: {
            path: { id },
            query: {
              limit: 25,
              ...(pageParam === undefined ? {} : { cursor: pageParam }),
              ...(types.length === 0 || types.length === TIMELINE_TYPES.length
                ? {}
                : { types: types.join(',') }),
            },
          },
          signal,
        }),
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export const historyQuery = (type: RecordType, id: string) =>
  infiniteQueryOptions({
    queryKey: recordKeys.history(type, id),
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam, signal }) =>
      unwrap(
        api.GET(PATHS[type].history, {
          params: {
            path: { id },
            query: { limit: 100, ...(pageParam === undefined ? {} : { cursor: pageParam }) },
          },
          signal,
        }),
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export const identityOperationsQuery = (id: string) =>
  queryOptions({
    queryKey: recordKeys.operations(id),
    queryFn: async ({ signal }) =>
      unwrap(
        api.GET('/api/v1/identity-operations', {
          params: { query: { recordId: id, limit: 100 } },
          signal,
        }),
      ),
  });

/** A person's activity insights (people only: the API computes them for no other type). */
export const insightsQuery = (id: string) =>
  queryOptions({
    queryKey: recordKeys.insights(id),
    queryFn: async ({ signal }) =>
      unwrap(api.GET('/api/v1/people/{id}/insights', { params: { path: { id } }, signal })),
  });

/** Keeps the newer of two views of a record: a late answer must not undo a live update. */
export function cacheRecord(
  queryClient: QueryClient,
  type: RecordType,
  id: string,
  record: RecordView,
): void {
  queryClient.setQueryData<RecordView>(recordKeys.detail(type, id), (cached) =>
    cached !== undefined && cached.id === record.id && cached.version > record.version ? cached : record,
  );
}

/** What a field edit came to: merged (the record after it), accepted for later, or stale (412). */
export type EditOutcome =
  | { kind: 'applied'; record: RecordView }
  | { kind: 'accepted' }
  | { kind: 'stale'; message: string };

export interface EditVariables {
  fields: Record<string, unknown>;
  /** The version the edit was made on (`If-Match`). */
  version: number;
  /** One per edit attempt; the same on a retry of the same draft. */
  idempotencyKey: string;
}

export function useEditRecordMutation(type: RecordType, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ fields, version, idempotencyKey }: EditVariables): Promise<EditOutcome> => {
      try {
        const data = await unwrap(
          api.PATCH(PATHS[type].record, {
            params: { path: { id } },
            body: { fields: fields as Record<string, string | number | boolean | string[] | null> },
            headers: { 'If-Match': `"${version}"`, 'Idempotency-Key': idempotencyKey },
          }),
        );
        return 'accepted' in data ? { kind: 'accepted' } : { kind: 'applied', record: data };
      } catch (error) {
        // Someone changed the record since the draft was made: never retried blindly.
        if (isApiError(error, 412)) return { kind: 'stale', message: error.message };
        throw error;
      }
    },
    onSuccess: (outcome) => {
      if (outcome.kind === 'applied') cacheRecord(queryClient, type, id, outcome.record);
    },
  });
}

export function useResolveConflictMutation(type: RecordType, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ conflictId, value }: { conflictId: string; value: unknown }) => {
      const data = await unwrap(
        api.POST('/api/v1/conflicts/{id}/resolve', { params: { path: { id: conflictId } }, body: { value } }),
      );
      return 'accepted' in data ? null : data;
    },
    onSuccess: async (record) => {
      if (record !== null) cacheRecord(queryClient, type, id, record);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: recordKeys.of(id) }),
        queryClient.invalidateQueries({ queryKey: ['inbox-counts'] }),
        queryClient.invalidateQueries({ queryKey: ['conflicts'] }),
      ]);
    },
  });
}

export type UnmergeOutcome =
  | { kind: 'applied'; restored: { id: string; displayName: string | null } }
  | { kind: 'accepted' };

export function useUnmergeMutation(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({
      operationId,
      idempotencyKey,
    }: {
      operationId: string;
      /** The same for every attempt at one Undo. */
      idempotencyKey: string;
    }): Promise<UnmergeOutcome> => {
      const data = await unwrap(
        api.POST('/api/v1/identity-operations/{operationId}/unmerge', {
          params: { path: { operationId } },
          headers: { 'Idempotency-Key': idempotencyKey },
        }),
      );
      return 'accepted' in data
        ? { kind: 'accepted' }
        : { kind: 'applied', restored: { id: data.restored.id, displayName: data.restored.displayName } };
    },
    onSuccess: async () => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: recordKeys.of(id) }),
        queryClient.invalidateQueries({ queryKey: ['records-list'] }),
        queryClient.invalidateQueries({ queryKey: ['inbox-counts'] }),
      ]);
    },
  });
}
