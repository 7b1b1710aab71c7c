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
import { handleIsolating, ident, realSchema, shadow, skipAdvisoryLocks } from '../dry-run/sandbox';
import { type ReplayReport, readReport, rememberBefore } from './replay-report';
import { oweFinalValues, putSavedPolicies, restoreKept } from './replay-restore';
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
 *   stage writes (the sandbox's SHADOWED list, dry-run/sandbox.ts), in a READ ONLY REPEATABLE READ transaction
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

export type { ReplayFieldChange, ReplayReport } from './replay-report';
export { ReplayRefused } from './replay-scope';

/** Advisory lock class for "one replay of a workspace at a time" (beside the API's check). */
const REPLAY_LOCK_CLASS = 0x5e50;

/** Previews a replay: nothing is written anywhere real; the report is returned. */
export async function previewReplay(
  pool: Pool,
  workspaceId: string,
  from: ReplayFrom,
  options: ReplayOptions = {},
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
  options: ReplayOptions = {},
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

/**
 * The rebuild meets every entity of the workspace, most of them again in its final pass
 * (oweFinalValues): the cache is bounded by memory (64 MB), not by the engine's default count
 * of 2,000 documents (bench replay: finish 5.5–7.3 s → 3.5–3.8 s at 10,000 records).
 */
const newEngine = (tx: LogTransaction) =>
  new MergeEngine(new PgMergeStore(tx), {
    cacheSize: 100_000,
    cacheBytes: 64 * 1024 * 1024,
    policyTtlMs: 60_000,
  });

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
  await putSavedPolicies(client, workspaceId);

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
 * Feeds the events to the stage in the log's order, `batchSize` at a time. A workspace's
 * events are all on one partition (libs/log's partitioner), so that order is the one the live
 * stage folded them in, whatever its batches were; our writes' claims and receipts are events
 * of the log like the rest, folded where they stand. Each batch runs behind a savepoint; a
 * batch that fails is retried event by event, and an event that fails alone is reported (the
 * live stage dead-letters it and moves on).
 */
async function feed(
  client: PoolClient,
  tx: LogTransaction,
  handler: SyncHandler,
  options: ReplayOptions,
  total: number,
): Promise<ReplayReport['failures']> {
  const failures: ReplayReport['failures'] = [];
  const batchSize = options.batchSize ?? 200;
  let replayed = 0;
  let after = { partition: -1, offset: 0 };
  for (;;) {
    const { rows } = await client.query<LogEventRow>(
      `SELECT ${EVENT_COLUMNS} FROM replay_events r JOIN change_event e USING (partition, "offset")
        WHERE (r.partition, r."offset") > ($1::int, $2::bigint)
        ORDER BY r.partition, r."offset" LIMIT $3`,
      [after.partition, after.offset, batchSize],
    );
    if (rows.length === 0) return failures;
    const events = rows.map(toLogEvent);
    await handleIsolating(client, tx, handler, events, failures);
    replayed += events.length;
    await options.onProgress?.(replayed, total);
    const last = events.at(-1)!;
    after = { partition: last.partition, offset: last.offset };
  }
}

const EVENT_COLUMNS = LOG_EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');

/** The tables a replay rebuilds: the log's derived tables (@syncline/log's registry). */
export const REBUILT_TABLES: readonly string[] = DERIVED_TABLE_NAMES;
