import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type Connection = JsonOf<paths['/api/v1/connections']['get']['responses'][200]>['data'][number];
export type SyncHealth = JsonOf<paths['/api/v1/health/sync']['get']['responses'][200]>;
export type ConnectionHealth = SyncHealth['connections'][number];
export type HealthHistory = JsonOf<paths['/api/v1/health/sync/history']['get']['responses'][200]>;
export type HistoryPoint = HealthHistory['connections'][number]['points'][number];
export type WorkspacePoint = HealthHistory['workspace'][number];

/** The ranges the page offers, in hours. */
export const HISTORY_RANGES = [1, 6, 24] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];

/** The cards follow the health every 5 s; the charts their samples, taken every minute. */
export const HEALTH_POLL_MS = 5_000;
export const HISTORY_POLL_MS = 60_000;

export const healthKeys = {
  all: ['health'] as const,
  now: () => ['health', 'now'] as const,
  workspace: (hours: HistoryRange) => ['health', 'history', 'workspace', hours] as const,
  connection: (hours: HistoryRange, id: string) => ['health', 'history', 'connection', hours, id] as const,
};

export interface HealthNow {
  connections: Connection[];
  /** Each connection's health, by id. */
  health: Record<string, ConnectionHealth>;
  deadLettersOpen: number;
  checkedAt: string;
}

/** The connections and their health now, read side by side. */
export const healthNowQuery = () =>
  queryOptions({
    queryKey: healthKeys.now(),
    queryFn: async ({ signal }): Promise<HealthNow> => {
      const [list, health] = await Promise.all([
        unwrap(api.GET('/api/v1/connections', { signal })),
        unwrap(api.GET('/api/v1/health/sync', { signal })),
      ]);
      return {
        connections: list.data.filter((c) => c.status !== 'disconnected'),
        health: Object.fromEntries(health.connections.map((h) => [h.id, h])),
        deadLettersOpen: health.deadLetters.open,
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
