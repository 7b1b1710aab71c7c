import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { IdentityService } from '@syncline/identity';
import {
  DERIVED_TABLE_NAMES,
  LOG_EVENT_COLUMNS,
  type LogEventRow,
  type LogTransaction,
  toLogEvent,
} from '@syncline/log';
import { SyncStage as SyncHandler } from '@syncline/sync-stage';
import type { Pool, PoolClient } from 'pg';
import { handleIsolating, ident, realSchema, shadow, skipAdvisoryLocks } from '../dry-run/dry-run-report';
import { SYNC_GROUP } from '../sync/sync-group';
import { readReport, rememberBefore } from './replay-report';
import { oweFinalValues, restoreKept } from './replay-restore';
import {
  clearDerived,
  committedOffsets,
  createWorkTables,
  liveEntityIds,
  refuseIncompleteHistory,
  selectScope,
} from './replay-scope';

/**
 * Replay: a workspace's derived state (entities, documents, links, conflicts, associations,
 * synced heads, outbox) rebuilt from its events on the change log by the sync stage itself
 * (a fresh SyncHandler: one code path for live input and replay), then compared with what
 * stood before.
 *
 * - `preview` runs like a connection's dry run: on session-private copies of the tables the
 *   stage writes (dry-run-report's SHADOWED list), in a READ ONLY REPEATABLE READ transaction
 *   that is rolled back.
 * - `apply` runs on the live tables in one READ COMMITTED transaction that first locks the
 *   workspace's connection rows FOR UPDATE. The live stage takes FOR KEY SHARE on the
 *   connections of every batch before anything else (SyncHandler.withoutDisconnected), and
 *   only FOR UPDATE conflicts with FOR KEY SHARE (FOR NO KEY UPDATE does not), so a live batch
 *   with an event of this workspace waits for the replay, and one already past that lock is
 *   waited for by it. The committed offsets of the sync group are read once the lock is held:
 *   the rebuild folds exactly the events the live stage had folded; later ones are the live
 *   stage's to apply on top of the rebuilt state after the commit, so none is lost or applied
 *   twice.
 *
 * Which records: `beginning` rebuilds every entity of the workspace. `eventTime` rebuilds
 * every entity holding a record with an event at or after that time, from the whole history
 * of every record it holds (a partial fold would be wrong), together with whatever it is tied
 * to: entities merged into it or it into, and activities whose participants it is.
 *
 * This file drives the fold (feed); what is rebuilt and cleared first is replay-scope.ts, what
 * the log does not carry and is put back after is replay-restore.ts, and the comparison with
 * what stood before is replay-report.ts.
 */

export type ReplayFrom = 'beginning' | { eventTime: Date };
export type ReplayMode = 'preview' | 'apply';

export interface ReplayOptions {
  /** LOG_PARTITIONS. */
  partitions: number;
  /** Events per sync-stage batch (the workers' consumer takes 200). */
  batchSize?: number;
  /** Most items in each list of the report (the summary always has the totals). Default 100. */
  limit?: number;
  /** Called once the events are counted and after every batch (outside the rebuild's transaction). */
  onProgress?: (replayed: number, total: number) => Promise<void>;
  /** Apply: runs in the rebuild's transaction just before its commit (the replay row is marked there). */
  beforeCommit?: (client: PoolClient, report: ReplayReport) => Promise<void>;
  /** Runs with the rebuilt state in place, before the commit or rollback (tests look around then). */
  inspect?: (client: PoolClient) => Promise<void>;
}

type Source = { kind: string; id: string };

export interface ReplayFieldChange {
  from: unknown;
  to: unknown;
  /** Where the new value comes from (provenance). */
  source: Source | null;
}

export interface ReplayReport {
  mode: ReplayMode;
  computedAt: string;
  /** What was rebuilt: records (source records), entities and events folded. */
  scope: { records: number; entities: number; events: number };
  /** The sync group's committed offset per partition: the events folded are those up to it. */
  offsets: Record<string, number>;
  summary: {
    changes: number;
    created: number;
    gone: number;
    conflictsAppeared: number;
    conflictsDisappeared: number;
    linksMoved: number;
    writes: number;
    failures: number;
  };
  changes: {
    entityId: string;
    entityType: string;
    displayName: string | null;
    fields: Record<string, ReplayFieldChange>;
  }[];
  created: { entityId: string; entityType: string; displayName: string | null }[];
  gone: { entityId: string; entityType: string; displayName: string | null }[];
  conflicts: {
    id: string;
    entityId: string;
    field: string;
    policy: string;
    /** `appeared`: new, or open again; `disappeared`: gone, or no longer open. */
    change: 'appeared' | 'disappeared';
    before: string | null;
    after: string | null;
  }[];
  links: {
    connectionId: string;
    entityType: string;
    externalId: string;
    from: string | null;
    to: string | null;
  }[];
  /** Writes owed to connected systems after the rebuild that were not owed before (final values only). */
  writes: { connectionId: string; entityId: string; op: string; fields: Record<string, unknown> }[];
  failures: { eventKey: string; entityType: string; externalId: string; error: string }[];
  truncated: boolean;
}

export { ReplayRefused } from './replay-scope';

/** Advisory lock class for "one replay of a workspace at a time" (beside the API's check). */
const REPLAY_LOCK_CLASS = 0x5e50;

/** Previews a replay: nothing is written anywhere real; the report is returned. */
export async function previewReplay(
  pool: Pool,
  workspaceId: string,
  from: ReplayFrom,
  options: ReplayOptions,
): Promise<ReplayReport> {
  const client = await pool.connect();
  let engine: MergeEngine | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const schema = await realSchema(client);
    const real = (table: string) => `${ident(schema)}.${ident(table)}`;
    // The whole outbox and every receipt and claim of the workspace: the stage upserts on sent
    // rows' keys, and folds receipts and claims again from the log.
    await shadow(client, schema, real, workspaceId, workspaceId, {
      outbox: 'workspace_id = $1',
      write_receipt: 'workspace_id = $1',
      write_claim: 'workspace_id = $1',
    });
    await createWorkTables(client);
    await client.query('SET TRANSACTION READ ONLY');
    const tx: LogTransaction = { query: (sql, params) => client.query(skipAdvisoryLocks(sql), params) };
    engine = newEngine(tx);
    const offsets = await committedOffsets(client);
    const report = await rebuild(client, tx, engine, workspaceId, from, offsets, 'preview', options);
    if (options.inspect) await options.inspect(client);
    return report;
  } finally {
    engine?.forget();
    await client.query('ROLLBACK').then(
      () => client.release(),
      (error: unknown) => client.release(error instanceof Error ? error : true),
    );
  }
}

/**
 * Applies a replay: the rebuild on the live tables, committed as one transaction (with
 * whatever `beforeCommit` writes), or nothing at all.
 */
export async function applyReplay(
  pool: Pool,
  workspaceId: string,
  from: ReplayFrom,
  options: ReplayOptions,
): Promise<ReplayReport> {
  const client = await pool.connect();
  let engine: MergeEngine | undefined;
  let committed = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [REPLAY_LOCK_CLASS, workspaceId]);
    // The live sync stage's batches with events of this workspace wait from here on (see above).
    await client.query('SELECT id FROM connection WHERE workspace_id = $1 ORDER BY id FOR UPDATE', [
      workspaceId,
    ]);
    // A new statement, so a new snapshot: it sees the offsets of any batch the lock waited for.
    const offsets = await committedOffsets(client);
    await createWorkTables(client);
    engine = newEngine(client);
    const report = await rebuild(client, client, engine, workspaceId, from, offsets, 'apply', options);
    if (options.inspect) await options.inspect(client);
    if (options.beforeCommit) await options.beforeCommit(client, report);
    await client.query('COMMIT');
    committed = true;
    return report;
  } finally {
    engine?.forget();
    if (!committed)
      await client.query('ROLLBACK').then(
        () => client.release(),
        (error: unknown) => client.release(error instanceof Error ? error : true),
      );
    else client.release();
  }
}

const newEngine = (tx: LogTransaction) =>
  new MergeEngine(new PgMergeStore(tx), { cacheBytes: 64 * 1024 * 1024, policyTtlMs: 60_000 });

async function rebuild(
  client: PoolClient,
  tx: LogTransaction,
  engine: MergeEngine,
  workspaceId: string,
  from: ReplayFrom,
  offsets: ReadonlyMap<number, number>,
  mode: ReplayMode,
  options: ReplayOptions,
): Promise<ReplayReport> {
  const limit = options.limit ?? 100;
  const q = (sql: string, params: unknown[] = []) => client.query(sql, params);
  await q('INSERT INTO replay_offsets SELECT * FROM unnest($1::int[], $2::bigint[])', [
    [...offsets.keys()],
    [...offsets.values()],
  ]);
  await selectScope(client, workspaceId, from);
  await refuseIncompleteHistory(client);
  await rememberBefore(client);
  const entityIdOf = await liveEntityIds(client, workspaceId);
  await clearDerived(client, workspaceId);

  const { rows: counted } = await q('SELECT count(*)::int AS n FROM replay_events');
  const total = (counted[0] as { n: number } | undefined)?.n ?? 0;
  await options.onProgress?.(0, total);
  const handler = new SyncHandler({
    identity: new IdentityService({ entityIdOf }),
    engine,
    connectionsTtlMs: 60_000,
    // A merge the replay meets again folds the same records, but the provider's own merge it
    // owed was queued (and sent) when the merge was made: never issued again from here.
    providerMerges: false,
  });
  const failures = await feed(client, tx, handler, options, total);

  await restoreKept(client);
  await oweFinalValues(client, tx, engine);
  const report = await readReport(client, mode, limit);
  report.scope.events = total;
  report.offsets = Object.fromEntries([...offsets].sort(([a], [b]) => a - b).map(([p, o]) => [String(p), o]));
  report.failures = failures.slice(0, limit);
  report.summary.failures = failures.length;
  report.truncated ||= failures.length > limit;
  return report;
}

/**
 * Events that came this close together were there for the same pass of the live consumer
 * (it wakes on the log's NOTIFY and takes every partition in turn).
 */
const PASS_WINDOW_MS = 100;

interface Position {
  partition: number;
  offset: number;
  /** When the event had come, made monotonic within its partition. */
  came: number;
  /** The live batch that handled it (consumer_batch), when the journal holds it. */
  seq: string | null;
}

/**
 * Feeds the events to the stage in the order the live stage handled them: the sync group's
 * journal (consumer_batch) names each batch it committed, in commit order, so each of those
 * batches is handed over again as it was (its partitions one after another, each in offset
 * order). Events older than the journal are fed first, in passes simulated from when they
 * came (simulatePasses). Our writes' claims and receipts are events of the log like the
 * rest, folded where they stand. Each batch runs behind a savepoint; a batch that fails is
 * retried event by event, and an event that fails alone is reported (the live stage
 * dead-letters it and moves on).
 */
async function feed(
  client: PoolClient,
  tx: LogTransaction,
  handler: SyncHandler,
  options: ReplayOptions,
  total: number,
): Promise<ReplayReport['failures']> {
  const failures: ReplayReport['failures'] = [];
  // Per partition, the journal's ranges follow each other without overlap: the first batch
  // ending at or after an offset is the one that handled it, if it began before it.
  const { rows } = await client.query<{ partition: number; offset: string; came: Date; seq: string | null }>(
    `SELECT r.partition, r."offset",
            max(e.ingested_at) OVER (PARTITION BY r.partition ORDER BY r."offset") AS came,
            CASE WHEN b.since_offset < r."offset" THEN b.seq END AS seq
       FROM replay_events r JOIN change_event e USING (partition, "offset")
       LEFT JOIN LATERAL (
         SELECT seq, since_offset FROM consumer_batch b
          WHERE b.group_name = $1 AND b.partition = r.partition AND b.last_offset >= r."offset"
          ORDER BY b.last_offset LIMIT 1) b ON true
      ORDER BY r.partition, r."offset"`,
    [SYNC_GROUP],
  );
  const positions: Position[] = rows.map((r) => ({
    partition: r.partition,
    offset: Number(r.offset),
    came: r.came.getTime(),
    seq: r.seq,
  }));
  let replayed = 0;
  const handOver = async (batch: readonly Position[]) => {
    const { rows: events } = await client.query<LogEventRow>(
      `SELECT ${EVENT_COLUMNS} FROM unnest($1::int[], $2::bigint[]) WITH ORDINALITY AS k(partition, "offset", i)
         JOIN change_event e USING (partition, "offset") ORDER BY k.i`,
      [batch.map((p) => p.partition), batch.map((p) => p.offset)],
    );
    const logEvents = events.map(toLogEvent);
    await handleIsolating(client, tx, handler, logEvents, failures);
    replayed += logEvents.length;
    await options.onProgress?.(replayed, total);
  };
  const before = positions.filter((p) => p.seq === null);
  for (const batch of simulatePasses(before, options.batchSize ?? 200)) await handOver(batch);
  const journaled = groupBy(
    positions.filter((p) => p.seq !== null),
    (p) => p.seq!,
  );
  const order = [...journaled.keys()].sort((a, b) => Number(BigInt(a) - BigInt(b)));
  for (const seq of order) await handOver(journaled.get(seq)!);
  return failures;
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

const EVENT_COLUMNS = LOG_EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');

/**
 * The batches for events the journal does not hold (handled before it was kept): per
 * partition in offset order, in passes over the partitions in turn, a batch (at most
 * `batchSize`) of each partition's events that had come by the pass. The passes are
 * simulated from when the events came, which gives the live order whenever the stage kept
 * up with the log.
 */
function simulatePasses(positions: readonly Position[], batchSize: number): Position[][] {
  if (positions.length === 0) return [];
  const queues = groupBy(positions, (p) => p.partition);
  const heads = new Map([...queues.keys()].map((p) => [p, 0]));
  const partitions = [...queues.keys()].sort((a, b) => a - b);
  const batches: Position[][] = [];
  let horizon = Number.NEGATIVE_INFINITY;
  let taken = 0;
  while (taken < positions.length) {
    let earliest = Number.POSITIVE_INFINITY;
    for (const p of partitions) {
      const next = queues.get(p)![heads.get(p)!];
      if (next !== undefined) earliest = Math.min(earliest, next.came);
    }
    horizon = Math.max(horizon, earliest) + PASS_WINDOW_MS;
    for (const p of partitions) {
      const queue = queues.get(p)!;
      const start = heads.get(p)!;
      let end = start;
      while (end < queue.length && end - start < batchSize && queue[end]!.came <= horizon) end++;
      if (end === start) continue;
      heads.set(p, end);
      batches.push(queue.slice(start, end));
      taken += end - start;
    }
  }
  return batches;
}

/** The tables a replay rebuilds: the log's derived tables (@syncline/log's registry). */
export const REBUILT_TABLES: readonly string[] = DERIVED_TABLE_NAMES;
