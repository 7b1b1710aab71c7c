import type { StatusConnection } from '../../connections/utils/connection-status';

/** The chart rows and summaries of the health history: pure, so tested without a browser. */

export interface SeriesPoint {
  at: string;
}

export interface LagPoint extends SeriesPoint {
  lagEvents: number;
  watermarkDelaySeconds: number | null;
}

export interface WritesPoint extends SeriesPoint {
  writesOk: number;
  writesFailed: Record<string, number>;
}

export interface ConsumerLagPoint extends SeriesPoint {
  consumerLag: number;
}

/** The x-axis label of a point: the local hour and minute. */
export function timeLabel(iso: string): string {
  const at = new Date(iso);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/** Error codes seen in the range, the most frequent first (ties by name), for stable series. */
export function failureCodes(points: readonly WritesPoint[]): string[] {
  const totals = new Map<string, number>();
  for (const p of points)
    for (const [code, n] of Object.entries(p.writesFailed)) totals.set(code, (totals.get(code) ?? 0) + n);
  return [...totals.entries()]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([code]) => code);
}

/** One row per bucket: `Sent` and one column per error code (0 where none). */
export function writesRows(
  points: readonly WritesPoint[],
  codes: readonly string[],
): Record<string, string | number>[] {
  return points.map((p) => {
    const row: Record<string, string | number> = { time: timeLabel(p.at), Sent: p.writesOk };
    for (const code of codes) row[code] = p.writesFailed[code] ?? 0;
    return row;
  });
}

/**
 * One row per bucket: lag in events and the watermark delay in minutes (one decimal);
 * a bucket without a watermark has no delay value (a gap, not a zero).
 */
export function lagRows(points: readonly LagPoint[]): Record<string, string | number | null>[] {
  return points.map((p) => ({
    time: timeLabel(p.at),
    lag: p.lagEvents,
    delay: p.watermarkDelaySeconds === null ? null : Math.round(p.watermarkDelaySeconds / 6) / 10,
  }));
}

export function consumerLagRows(points: readonly ConsumerLagPoint[]): Record<string, string | number>[] {
  return points.map((p) => ({ time: timeLabel(p.at), lag: p.consumerLag }));
}

const count = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** What a screen reader hears of the writes chart: the totals over the range, refusals by code. */
export function writesSummary(points: readonly WritesPoint[], hours: number): string {
  const sent = points.reduce((sum, p) => sum + p.writesOk, 0);
  const codes = failureCodes(points);
  const refused = codes.map((code) => {
    const n = points.reduce((sum, p) => sum + (p.writesFailed[code] ?? 0), 0);
    return `${n.toLocaleString('en')} ${code}`;
  });
  const range = `the last ${count(hours, 'hour')}`;
  return refused.length === 0
    ? `${count(sent, 'write')} sent in ${range}, none refused.`
    : `${count(sent, 'write')} sent in ${range}; refused: ${refused.join(', ')}.`;
}

/** The latest and the highest value of a series, for the chart's caption. */
export function latestAndPeak(values: readonly (number | null)[]): {
  latest: number | null;
  peak: number | null;
} {
  const present = values.filter((v): v is number => v !== null);
  return {
    latest: values.length === 0 ? null : (values[values.length - 1] ?? null),
    peak: present.length === 0 ? null : Math.max(...present),
  };
}

/**
 * The connection the lag chart opens on: the one most behind now (most events to merge, then
 * the oldest watermark), else the first.
 */
export function mostBehind<T extends { lag: { events: number }; watermarkDelaySeconds: number | null }>(
  connections: readonly T[],
): T | undefined {
  let best: T | undefined;
  let bestKey: [number, number] = [-1, -1];
  for (const c of connections) {
    const key: [number, number] = [c.lag.events, c.watermarkDelaySeconds ?? 0];
    if (best === undefined || key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
      best = c;
      bestKey = key;
    }
  }
  return best;
}

/** Where a status comes in the cards: what needs an admin first, Live last. */
const ATTENTION: Readonly<Record<string, number>> = {
  action_required: 0,
  error: 1,
  behind: 2,
  backfilling: 3,
  paused: 4,
  dry_run: 5,
  live: 6,
  disconnected: 7,
};

/** The cards in the order an admin reads them: by `attention` of their status, then as given. */
export function byAttention<T>(items: readonly T[], kindOf: (item: T) => string): T[] {
  return items
    .map((item, i) => ({ item, i, rank: ATTENTION[kindOf(item)] ?? ATTENTION.live! }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map(({ item }) => item);
}

/** A connection's health as the connections module's status and fix read a connection. */
export function statusSubject(h: {
  status: StatusConnection['status'];
  dryRun: boolean;
  hasCredentials: boolean;
  backfill: { seen: number; total: number | null };
  lag: { events: number };
  watermarkDelaySeconds: number | null;
  lastErrorCode: string | null;
}): StatusConnection & { state: { lastErrorCode: string | null } } {
  return {
    status: h.status,
    dryRun: h.dryRun,
    hasCredentials: h.hasCredentials,
    state: {
      backfill: { seen: h.backfill.seen, estimatedTotal: h.backfill.total },
      lag: h.lag,
      watermarkDelaySeconds: h.watermarkDelaySeconds,
      lastErrorCode: h.lastErrorCode,
    },
  };
}
