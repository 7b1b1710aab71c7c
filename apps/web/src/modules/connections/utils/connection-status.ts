import type { Tone } from '../../../ui/StatusBadge';

/** What the status reads of a connection (as `GET /api/v1/connections` answers it). */
export interface StatusConnection {
  status: 'pending' | 'backfilling' | 'live' | 'paused' | 'needs_reauth' | 'error' | 'disconnected';
  dryRun: boolean;
  hasCredentials: boolean;
  state: {
    backfill: { seen: number; estimatedTotal: number | null };
    lag: { events: number };
    watermarkDelaySeconds: number | null;
  };
}

/** What it reads of the connection's health (`GET /api/v1/health/sync`), when there is one. */
export interface StatusHealth {
  lag: { events: number };
  watermark: string | null;
}

export type ConnectionStatusKind =
  | 'backfilling'
  | 'live'
  | 'behind'
  | 'paused'
  | 'action_required'
  | 'error'
  | 'dry_run'
  | 'disconnected';

export interface ConnectionStatusView {
  kind: ConnectionStatusKind;
  /** The one word (or two) shown: "Backfilling 42 %", "Live", "Action required"… */
  label: string;
  tone: Tone;
  /** Why it is Behind (which threshold it passed); null otherwise. */
  detail: string | null;
}

/**
 * A live connection is Behind when the merge has more than this many of its events still to
 * consume, or its watermark (the time it is known complete up to) is older than this: with
 * pulls every few seconds and webhooks, a healthy one stays well under both.
 */
export const BEHIND_LAG_EVENTS = 1_000;
export const BEHIND_WATERMARK_SECONDS = 10 * 60;

/** Reading (or about to read) its history: the page polls faster meanwhile. */
export const isBackfilling = (c: Pick<StatusConnection, 'status'>): boolean =>
  c.status === 'pending' || c.status === 'backfilling';

/** How far a backfill is, in whole percent (at most 99 until it is done); null without a total. */
export function backfillPercent(seen: number, total: number | null): number | null {
  if (total === null || total <= 0) return null;
  return Math.max(0, Math.min(99, Math.floor((seen / total) * 100)));
}

/**
 * The one status an admin reads for a connection. What needs an admin comes first (it is
 * gone, needs reconnecting, failed, or was paused), then dry run (nothing of it is synced
 * whatever its backfill), then the backfill, then Live or Behind. `now` dates the watermark
 * when the health answer carries one fresher than the list's.
 */
export function connectionStatus(
  connection: StatusConnection,
  health: StatusHealth | undefined,
  now: number = Date.now(),
): ConnectionStatusView {
  switch (connection.status) {
    case 'disconnected':
      return { kind: 'disconnected', label: 'Disconnected', tone: 'neutral', detail: null };
    case 'needs_reauth':
      return { kind: 'action_required', label: 'Action required', tone: 'danger', detail: null };
    case 'error':
      return { kind: 'error', label: 'Error', tone: 'danger', detail: null };
    case 'paused':
      return { kind: 'paused', label: 'Paused', tone: 'neutral', detail: null };
    default:
      break;
  }
  if (!connection.hasCredentials)
    return { kind: 'action_required', label: 'Action required', tone: 'danger', detail: null };
  if (connection.dryRun) return { kind: 'dry_run', label: 'Dry run', tone: 'info', detail: null };
  if (isBackfilling(connection)) {
    const { seen, estimatedTotal } = connection.state.backfill;
    const percent = connection.status === 'pending' ? 0 : backfillPercent(seen, estimatedTotal);
    return {
      kind: 'backfilling',
      label: percent === null ? 'Backfilling' : `Backfilling ${percent} %`,
      tone: 'info',
      detail: null,
    };
  }
  const lag = health?.lag.events ?? connection.state.lag.events;
  const delay = watermarkDelay(connection, health, now);
  if (lag > BEHIND_LAG_EVENTS)
    return {
      kind: 'behind',
      label: 'Behind',
      tone: 'warning',
      detail: `${lag.toLocaleString('en')} changes wait to be merged (more than ${BEHIND_LAG_EVENTS.toLocaleString('en')})`,
    };
  if (delay !== null && delay > BEHIND_WATERMARK_SECONDS)
    return {
      kind: 'behind',
      label: 'Behind',
      tone: 'warning',
      detail: `known complete only up to ${durationWords(delay)} ago (more than ${durationWords(BEHIND_WATERMARK_SECONDS)})`,
    };
  return { kind: 'live', label: 'Live', tone: 'success', detail: null };
}

/** Seconds the watermark is behind `now`: from the health answer when it has one, else the list's. */
export function watermarkDelay(
  connection: StatusConnection,
  health: StatusHealth | undefined,
  now: number,
): number | null {
  if (health?.watermark) {
    const at = Date.parse(health.watermark);
    if (!Number.isNaN(at)) return Math.max(0, Math.floor((now - at) / 1000));
  }
  return connection.state.watermarkDelaySeconds;
}

/** "45 s", "12 min", "3 h", "2 d". */
export function durationWords(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** What an admin may do to a connection in its status (what the API would accept). */
export interface ConnectionActions {
  pause: boolean;
  resume: boolean;
  resync: boolean;
  reconnect: boolean;
  disconnect: boolean;
  dryRunReport: boolean;
  mappings: boolean;
}

export function connectionActions(
  c: Pick<StatusConnection, 'status' | 'dryRun' | 'hasCredentials'>,
): ConnectionActions {
  const gone = c.status === 'disconnected';
  const reauth = c.status === 'needs_reauth' || (!gone && !c.hasCredentials);
  return {
    pause: !gone && c.status !== 'paused',
    resume: (c.status === 'paused' || c.status === 'error') && c.hasCredentials,
    resync: !gone && !reauth && c.status !== 'paused',
    reconnect: reauth,
    disconnect: !gone,
    dryRunReport: !gone && c.dryRun,
    mappings: !gone,
  };
}
