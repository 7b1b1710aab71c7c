import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type SyncHealth = JsonOf<paths['/api/v1/health/sync']['get']['responses'][200]>;
export type ConnectionHealth = SyncHealth['connections'][number];
export type HealthHistory = JsonOf<paths['/api/v1/health/sync/history']['get']['responses'][200]>;
export type HistoryPoint = HealthHistory['connections'][number]['points'][number];
export type WorkspacePoint = HealthHistory['workspace'][number];
export type TimeZoneSetting = JsonOf<paths['/api/v1/workspace/time-zone']['get']['responses'][200]>;

/** The ranges the page offers, in hours. */
export const HISTORY_RANGES = [1, 6, 24] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];
/** The range the page opens on. */
export const DEFAULT_RANGE: HistoryRange = 6;

/** The cards follow the health every 5 s; the charts their samples, taken every minute. */
export const HEALTH_POLL_MS = 5_000;
export const HISTORY_POLL_MS = 60_000;

export const healthKeys = {
  all: ['health'] as const,
  now: () => ['health', 'now'] as const,
  workspace: (hours: HistoryRange) => ['health', 'history', 'workspace', hours] as const,
  connection: (hours: HistoryRange, id: string) => ['health', 'history', 'connection', hours, id] as const,
  timeZone: () => ['workspace', 'time-zone'] as const,
};

export interface HealthNow {
  /** Every connection but the disconnected, each with its health. */
  connections: ConnectionHealth[];
  deadLettersOpen: number;
  /** The activity insights' watermark, what holds it, and what came late. */
  insights: SyncHealth['insights'];
  /** The connections holding the insights back, disconnected ones too, to name them. */
  insightsHolders: ConnectionHealth[];
  checkedAt: string;
}

/** The connections' health now (one answer: names, status, lag, backlog). */
export const healthNowQuery = () =>
  queryOptions({
    queryKey: healthKeys.now(),
    queryFn: async ({ signal }): Promise<HealthNow> => {
      const health = await unwrap(api.GET('/api/v1/health/sync', { signal }));
      return {
        connections: health.connections.filter((c) => c.status !== 'disconnected'),
        deadLettersOpen: health.deadLetters.open,
        insights: health.insights,
        insightsHolders: health.connections.filter((c) =>
          health.insights.heldBy.some((h) => h.connectionId === c.id),
        ),
        checkedAt: health.checkedAt,
      };
    },
    refetchInterval: HEALTH_POLL_MS,
    staleTime: 1_000,
  });

/** The workspace's series over the range: writes and refusals summed, consumer lag. */
export const workspaceHistoryQuery = (hours: HistoryRange) =>
  queryOptions({
    queryKey: healthKeys.workspace(hours),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/sync/history', {
          params: { query: { hours, scope: 'workspace' } },
          signal,
        }),
      ),
    refetchInterval: HISTORY_POLL_MS,
    staleTime: 10_000,
  });

/** One connection's series over the range: lag and watermark delay. */
export const connectionHistoryQuery = (hours: HistoryRange, connectionId: string) =>
  queryOptions({
    queryKey: healthKeys.connection(hours, connectionId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/sync/history', {
          params: { query: { hours, connectionId } },
          signal,
        }),
      ),
    refetchInterval: HISTORY_POLL_MS,
    staleTime: 10_000,
  });

/**
 * The workspace's time zone: the saved one, and the one the insights are cut in now. Asked
 * again every few seconds while the sync stage is recomputing in a newly saved zone.
 */
export const timeZoneQuery = () =>
  queryOptions({
    queryKey: healthKeys.timeZone(),
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/workspace/time-zone', { signal })),
    refetchInterval: (query) =>
      query.state.data !== undefined && query.state.data.inForce !== query.state.data.timeZone
        ? HEALTH_POLL_MS
        : false,
  });

export type TimeZoneSaveOutcome =
  | { kind: 'saved'; setting: TimeZoneSetting }
  | { kind: 'stale'; message: string };

/**
 * Sets the zone on the version it was read at (`If-Match`). A 412 is an outcome, not an
 * error: another admin saved first, and the section offers to read theirs.
 */
export function useSaveTimeZone() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({
      timeZone,
      version,
    }: {
      timeZone: string;
      version: number;
    }): Promise<TimeZoneSaveOutcome> => {
      try {
        const setting = await unwrap(
          api.PUT('/api/v1/workspace/time-zone', {
            body: { timeZone },
            headers: { 'If-Match': `"${version}"` },
          }),
        );
        return { kind: 'saved', setting };
      } catch (error) {
        if (error instanceof ApiError && error.status === 412)
          return { kind: 'stale', message: error.message };
        throw error;
      }
    },
    onSuccess: (outcome) => {
      if (outcome.kind === 'saved') client.setQueryData(healthKeys.timeZone(), outcome.setting);
      void client.invalidateQueries({ queryKey: healthKeys.now() });
    },
  });
}
