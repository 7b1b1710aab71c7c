/** Most points a series of the history holds; a longer range is downsampled into wider buckets. */
export const MAX_HISTORY_POINTS = 300;

/**
 * The bucket width, in whole seconds, that keeps `hours` of history within MAX_HISTORY_POINTS;
 * past a minute, whole minutes, so each bucket holds as many of the minute samples as the next
 * (a 72 s bucket would hold one or two, and a chart of sums would saw-tooth).
 */
export function historyBucketSeconds(hours: number): number {
  const seconds = Math.max(1, Math.ceil((hours * 3_600) / MAX_HISTORY_POINTS));
  return seconds <= 60 ? seconds : Math.ceil(seconds / 60) * 60;
}

/** One bucket of one connection, as the history query reads it. */
export interface HistoryBucketRow {
  connectionId: string;
  at: Date;
  lagEvents: number;
  watermarkDelaySeconds: number | null;
  pendingWrites: number;
  writesOk: number;
  consumerLag: number;
  deadLettersOpen: number;
}

/** One bucket of the workspace, its connections' samples summed (see workspaceHistory). */
export interface WorkspaceBucketRow {
  at: Date;
  consumerLag: number;
  deadLettersOpen: number;
  writesOk: number;
  pendingWrites: number;
}

/** Writes refused in one bucket of one connection with one error code. */
export interface HistoryFailureRow {
  connectionId: string;
  at: Date;
  code: string;
  writes: number;
}

export interface HistoryConnectionInfo {
  id: string;
  provider: string;
  displayName: string | null;
}

export interface HistoryPoint {
  at: string;
  lagEvents: number;
  watermarkDelaySeconds: number | null;
  pendingWrites: number;
  writesOk: number;
  writesFailed: Record<string, number>;
}

export interface WorkspacePoint {
  at: string;
  consumerLag: number;
  deadLettersOpen: number;
  /** Its connections' writes sent in the bucket, summed. */
  writesOk: number;
  /** Its connections' writes refused in the bucket, by error code, summed. */
  writesFailed: Record<string, number>;
  /** Its connections' largest backlogs in the bucket, summed. */
  pendingWrites: number;
}

export interface HistorySeries {
  connections: (HistoryConnectionInfo & { points: HistoryPoint[] })[];
  workspace: WorkspacePoint[];
}

/**
 * Folds the buckets into a series per connection (in the order `connections` gives, each in
 * time order) with the refused writes by code, and the workspace's series: its own figures
 * repeat on each connection's sample, so a bucket's value is their largest; its writes and
 * backlog are its connections' summed. Buckets of a connection not in `connections` (gone
 * since) are left out.
 */
export function toHistorySeries(
  connections: readonly HistoryConnectionInfo[],
  buckets: readonly HistoryBucketRow[],
  failures: readonly HistoryFailureRow[],
): HistorySeries {
  const key = (connectionId: string, at: Date) => `${connectionId}@${at.getTime()}`;
  const failed = new Map<string, Record<string, number>>();
  for (const f of failures) {
    const codes = failed.get(key(f.connectionId, f.at)) ?? {};
    codes[f.code] = (codes[f.code] ?? 0) + f.writes;
    failed.set(key(f.connectionId, f.at), codes);
  }
  const byConnection = new Map<string, HistoryPoint[]>(connections.map((c) => [c.id, []]));
  const workspace = new Map<number, WorkspacePoint>();
  const sorted = [...buckets].sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const b of sorted) {
    const points = byConnection.get(b.connectionId);
    if (points === undefined) continue;
    points.push({
      at: b.at.toISOString(),
      lagEvents: b.lagEvents,
      watermarkDelaySeconds: b.watermarkDelaySeconds,
      pendingWrites: b.pendingWrites,
      writesOk: b.writesOk,
      writesFailed: { ...(failed.get(key(b.connectionId, b.at)) ?? {}) },
    });
    const writesFailed = failed.get(key(b.connectionId, b.at)) ?? {};
    const point = workspace.get(b.at.getTime());
    if (point === undefined) {
      workspace.set(b.at.getTime(), {
        at: b.at.toISOString(),
        consumerLag: b.consumerLag,
        deadLettersOpen: b.deadLettersOpen,
        writesOk: b.writesOk,
        writesFailed: { ...writesFailed },
        pendingWrites: b.pendingWrites,
      });
      continue;
    }
    point.consumerLag = Math.max(point.consumerLag, b.consumerLag);
    point.deadLettersOpen = Math.max(point.deadLettersOpen, b.deadLettersOpen);
    point.writesOk += b.writesOk;
    point.pendingWrites += b.pendingWrites;
    for (const [code, writes] of Object.entries(writesFailed))
      point.writesFailed[code] = (point.writesFailed[code] ?? 0) + writes;
  }
  return {
    connections: connections.map((c) => ({ ...c, points: byConnection.get(c.id) ?? [] })),
    workspace: [...workspace.values()],
  };
}

/** The workspace's series from its buckets, with the writes refused in each by code. */
export function toWorkspaceSeries(
  buckets: readonly WorkspaceBucketRow[],
  failures: readonly { at: Date; code: string; writes: number }[],
): WorkspacePoint[] {
  const failed = new Map<number, Record<string, number>>();
  for (const f of failures) {
    const codes = failed.get(f.at.getTime()) ?? {};
    codes[f.code] = (codes[f.code] ?? 0) + f.writes;
    failed.set(f.at.getTime(), codes);
  }
  return [...buckets]
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .map((b) => ({
      at: b.at.toISOString(),
      consumerLag: b.consumerLag,
      deadLettersOpen: b.deadLettersOpen,
      writesOk: b.writesOk,
      writesFailed: failed.get(b.at.getTime()) ?? {},
      pendingWrites: b.pendingWrites,
    }));
}
