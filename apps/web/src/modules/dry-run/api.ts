import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import { connectionKeys } from '../connections/api';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type DryRunReport = JsonOf<paths['/api/v1/connections/{id}/dry-run']['get']['responses'][200]>;
export type DryRunWrites = DryRunReport['writes'][number];
/** No report yet (202): the workers are computing the first one, or say why their last try failed. */
export type DryRunComputing = JsonOf<paths['/api/v1/connections/{id}/dry-run']['get']['responses'][202]>;
export const isComputing = (answer: DryRunReport | DryRunComputing): answer is DryRunComputing =>
  'computing' in answer;

/** Most rows per list of the report: enough for the page's tables. */
export const REPORT_LIMIT = 500;
/** How often a report still backfilling is read again. */
export const REFRESH_MS = 2_500;

export const dryRunKeys = {
  all: ['dry-run'] as const,
  report: (id: string) => ['dry-run', id] as const,
};

/** The API answers 404 for a connection that is not in dry run (never was, or was enabled). */
export const isNotInDryRun = (error: unknown): boolean => error instanceof ApiError && error.status === 404;
/** …and 409 `connection_disconnected` for one disconnected since (a discarded dry run). */
export const isDisconnected = (error: unknown): boolean =>
  error instanceof ApiError && error.code === 'connection_disconnected';

export const dryRunReportQuery = (id: string) =>
  queryOptions({
    queryKey: dryRunKeys.report(id),
    queryFn: ({ signal }): Promise<DryRunReport | DryRunComputing> =>
      unwrap(
        api.GET('/api/v1/connections/{id}/dry-run', {
          params: { path: { id }, query: { limit: REPORT_LIMIT } },
          signal,
        }),
      ),
    // Read again while there is more to come: the first report, a newer one, or the backfill's rest.
    refetchInterval: (query) => {
      const answer = query.state.data;
      if (answer === undefined) return false;
      if (isComputing(answer)) return answer.retryAfterSeconds * 1_000;
      return answer.stale || !answer.complete ? REFRESH_MS : false;
    },
    // A connection not in dry run stays so: asking again would not change the answer.
    retry: (count, error) => !isNotInDryRun(error) && !isDisconnected(error) && count < 2,
  });

export function useEnableConnection(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/connections/{id}/enable', { params: { path: { id } } })),
    onSuccess: () => {
      client.removeQueries({ queryKey: dryRunKeys.report(id) });
      void client.invalidateQueries({ queryKey: connectionKeys.all });
    },
  });
}

/** Discarding a dry run disconnects it and erases what only it read (nothing of it was synced). */
export function useDiscardDryRun(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/v1/connections/{id}', { params: { path: { id }, query: { data: 'erase' } } })),
    onSuccess: () => {
      client.removeQueries({ queryKey: dryRunKeys.report(id) });
      void client.invalidateQueries({ queryKey: connectionKeys.all });
    },
  });
}
