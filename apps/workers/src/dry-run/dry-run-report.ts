import { isDeepStrictEqual } from 'node:util';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { ProviderKey } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import { type LogEventRow, type LogTransaction, partitionFor, toLogEvent } from '@syncline/log';
import { queueReconcileCreates, SyncStage as SyncHandler } from '@syncline/sync-stage';
import type { Pool, PoolClient } from 'pg';
import { type FoldFailure, handleIsolating, ident, realSchema, sandboxed, shadow } from './sandbox';

/**
 * The dry run of a connection: what enabling it would do, computed by the sync stage itself
 * (a fresh SyncHandler with its own identity caches and merge engine) over the connection's
 * staged changes, in a transaction that is always rolled back.
 *
 * The stage runs on session-private copies of the workspace's rows: temporary tables named
 * like the tables it writes (PostgreSQL looks a table up in the session's temporary schema
 * first), filled from one REPEATABLE READ snapshot. So it locks no row another process needs
 * (the live sync stage and the pushers never wait on a dry run), its advisory locks are
 * skipped (they only order writers of the real tables), and once the copies are made the
 * transaction is READ ONLY: PostgreSQL refuses any write or row lock on a real table, so
 * nothing a dry run does can be observed outside it. What it would have done is read from
 * the copies (links, entity views, conflicts, outbox rows) against the snapshot's real rows.
 */

export interface DryRunReportOptions {
  /** LOG_PARTITIONS: the partition the staged changes would have on the log. */
  partitions: number;
  /** Most items in each list of the report (totals are always complete). Default 100. */
  limit?: number;
  /** Writes shown per target connection and operation. Default 5. */
  sampleSize?: number;
  /** Events per sync-stage batch (the workers' consumer takes 200). */
  batchSize?: number;
  /** Runs with the simulated state in place, just before the rollback (tests look around then). */
  beforeRollback?: (client: PoolClient) => Promise<void>;
  /** Runs just before and just after the sync stage runs in the sandbox (tests count table reads). */
  aroundStage?: (client: PoolClient, when: 'before' | 'after') => Promise<void>;
}

export interface DryRunLink {
  entityType: string;
  externalId: string;
  entityId: string;
  displayName: string | null;
}

export interface DryRunCreation {
  entityId: string;
  entityType: string;
  displayName: string | null;
  /** The connection's records that would make up the new record. */
  externalIds: string[];
  fields: Record<string, unknown>;
}

export interface DryRunFieldChange {
  from: unknown;
  to: unknown;
  /** Who the new value would come from (provenance). */
  source: { kind: string; id: string } | null;
}

export interface DryRunChange {
  entityId: string;
  entityType: string;
  displayName: string | null;
  fields: Record<string, DryRunFieldChange>;
}

export interface DryRunConflict {
  id: string;
  entityId: string;
  entityType: string;
  field: string;
  kind: string;
  policy: string;
  /** `open`: waits in the conflicts inbox (manual); `resolved`: settled by the policy. */
  status: string;
  candidates: { value: unknown; source: { kind: string; id: string }; eventTime: string }[];
  winner: { value: unknown; source: { kind: string; id: string }; eventTime: string } | null;
}

export interface DryRunPossibleDuplicate {
  id: string;
  entityType: string;
  entityA: string;
  entityB: string;
  score: number;
}

export interface DryRunWrite {
  op: string;
  entityId: string;
  entityType: string;
  externalId: string | null;
  fields: Record<string, unknown>;
}

export interface DryRunWrites {
  connectionId: string;
  provider: ProviderKey;
  displayName: string | null;
  /** The connection in dry run itself (what the other systems bring it), not another system. */
  self: boolean;
  total: number;
  /** Writes by operation: create, update, delete; associate and dissociate (relation-writeback.ts). */
  counts: Record<string, number>;
  sample: DryRunWrite[];
}

/**
 * A connected system owed no creates yet: not live (still on its first sync, paused, awaiting
 * credentials) or not reconciled (its backfill not linked yet). What it would be owed is decided
 * once it is both, so the report's writes leave it out.
 */
export interface DryRunWaitingTarget {
  connectionId: string;
  provider: ProviderKey;
  displayName: string | null;
  status: string;
  reconciled: boolean;
}

/** A staged change the stage refused alone (what the consumer would dead-letter). */
export type DryRunFailure = FoldFailure;

export interface DryRunReport {
  connectionId: string;
  workspaceId: string;
  provider: ProviderKey;
  displayName: string | null;
  status: string;
  /** The backfill finished: the report covers every record of the connection read so far. */
  complete: boolean;
  backfill: { seen: number; estimatedTotal: number | null };
  computedAt: string;
  /** The last staged change it covers (its id; '0': none): the point of the backfill it reports on. */
  stagedUpTo: string;
  staged: { changes: number; records: number };
  summary: {
    links: number;
    creations: number;
    changes: number;
    conflicts: number;
    possibleDuplicates: number;
    writes: number;
    failures: number;
  };
  links: DryRunLink[];
  creations: DryRunCreation[];
  changes: DryRunChange[];
  conflicts: DryRunConflict[];
  possibleDuplicates: DryRunPossibleDuplicate[];
  writes: DryRunWrites[];
  failures: DryRunFailure[];
  /** Connected systems owed no creates yet: their part is decided later (DryRunWaitingTarget). */
  waitingTargets: DryRunWaitingTarget[];
  /** Some list holds fewer items than its total (see `limit`). */
  truncated: boolean;
}

/** Thrown when the connection does not exist (in any workspace). */
export class DryRunConnectionMissing extends Error {}

const CHUNK = 1_000;

interface ConnectionRow {
  id: string;
  workspace_id: string;
  provider: ProviderKey;
  display_name: string | null;
  status: string;
  cursors: Record<string, unknown> | null;
  backfill_seen: number;
  backfill_total: number | null;
}

export async function computeDryRunReport(
  pool: Pool,
  connectionId: string,
  options: DryRunReportOptions,
): Promise<DryRunReport> {
  const limit = options.limit ?? 100;
  const client = await pool.connect();
  let engine: MergeEngine | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const { rows: found } = await client.query<ConnectionRow>(
      `SELECT id::text AS id, workspace_id::text AS workspace_id, provider::text AS provider, display_name,
              status::text AS status, cursors, backfill_seen, backfill_total
         FROM connection WHERE id = $1`,
      [connectionId],
    );
    const connection = found[0];
    if (connection === undefined) throw new DryRunConnectionMissing(`no connection ${connectionId}`);
    const workspaceId = connection.workspace_id;
    const schema = await realSchema(client);
    const real = (table: string) => `${ident(schema)}.${ident(table)}`;
    const outboxBefore = await shadow(client, schema, real, workspaceId, connectionId);
    // As it will be once enabled: its changes are the stage's input like any connection's.
    await client.query('UPDATE pg_temp.connection SET dry_run = false WHERE id = $1', [connectionId]);
    await client.query('SET TRANSACTION READ ONLY');

    const tx = await sandboxed(client, schema);
    engine = new MergeEngine(new PgMergeStore(tx), { cacheBytes: 64 * 1024 * 1024, policyTtlMs: 60_000 });
    const handler = new SyncHandler({ identity: new IdentityService(), engine, connectionsTtlMs: 60_000 });
    await options.aroundStage?.(client, 'before');
    const failures = await runStaged(client, tx, handler, connectionId, options);
    const complete = connection.cursors !== null && 'live' in connection.cursors;
    // The records it lacks are queued for it once its backfill is linked (OutboxSweep.reconcile).
    if (complete) await queueReconcileCreates(tx, connection);
    await options.aroundStage?.(client, 'after');

    const report = await readReport(client, real, connection, outboxBefore, {
      limit,
      sampleSize: options.sampleSize ?? 5,
    });
    report.complete = complete;
    report.waitingTargets = await waitingTargets(client, connection);
    report.failures = failures.slice(0, limit);
    report.summary.failures = failures.length;
    report.truncated ||= failures.length > limit;
    if (options.beforeRollback) await options.beforeRollback(client);
    return report;
  } finally {
    // Automerge documents live in WebAssembly memory until freed.
    engine?.forget();
    // Nothing was committed either way; a connection that cannot roll back is dropped.
    await client.query('ROLLBACK').then(
      () => client.release(),
      (error: unknown) => client.release(error instanceof Error ? error : true),
    );
  }
}

/** The workspace's other systems owed no creates yet, as the stage sees them (owed-writes.ts). */
async function waitingTargets(client: PoolClient, connection: ConnectionRow): Promise<DryRunWaitingTarget[]> {
  const { rows } = await client.query<DryRunWaitingTarget>(
    `SELECT id::text AS "connectionId", provider::text AS provider, display_name AS "displayName",
            status::text AS status, reconciled_at IS NOT NULL AS reconciled
       FROM pg_temp.connection
      WHERE workspace_id = $1 AND id <> $2 AND provider <> 'syncline' AND status <> 'disconnected'
        AND NOT dry_run AND (status <> 'live' OR reconciled_at IS NULL)
      ORDER BY id`,
    [connection.workspace_id, connection.id],
  );
  return rows;
}

/** A staged change read as a log row: its staging id stands for the offset it will get. */
type StagedRow = Omit<LogEventRow, 'partition'>;

/**
 * Feeds the staged changes to the stage in the order they were staged, as the log's consumer
 * would take them once they are on the log: in batches (one partition holds them all), each behind a
 * savepoint; a batch that fails is retried change by change, and a change that fails alone is
 * what the consumer would dead-letter.
 */
async function runStaged(
  client: PoolClient,
  tx: LogTransaction,
  handler: SyncHandler,
  connectionId: string,
  options: DryRunReportOptions,
): Promise<DryRunFailure[]> {
  const batchSize = options.batchSize ?? 200;
  const failures: DryRunFailure[] = [];
  let after = '0';
  for (;;) {
    const { rows } = await client.query<StagedRow>(
      `SELECT id::text AS "offset", workspace_id, connection_id, event_key, entity_type, external_id, op, fields,
              field_times, event_time, staged_at AS ingested_at, provider_version, origin
         FROM staged_change s WHERE connection_id = $1 AND s.id > $2::bigint ORDER BY s.id LIMIT $3`,
      [connectionId, after, CHUNK],
    );
    if (rows.length === 0) return failures;
    after = rows.at(-1)!.offset;
    // A workspace's changes are all on one partition: in the order staged, in batches.
    const partition = partitionFor(rows[0]!.workspace_id, options.partitions);
    const events = rows.map((row) => toLogEvent({ ...row, partition }));
    for (let at = 0; at < events.length; at += batchSize)
      await handleIsolating(client, tx, handler, events.slice(at, at + batchSize), failures);
    if (rows.length < CHUNK) return failures;
  }
}

/** An entity's fields before and after, with the provenance after: as both reports read them. */
export interface FieldsBeforeAfter {
  id: string;
  entity_type: string;
  display_name: string | null;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  provenance: Record<string, { source?: { kind: string; id: string } }>;
}

/** Per entity, the fields whose values differ (old → new, with who the new one comes from). */
export function fieldChangesOf(rows: readonly FieldsBeforeAfter[]): DryRunChange[] {
  const changes: DryRunChange[] = [];
  for (const row of rows) {
    const fields: Record<string, DryRunFieldChange> = {};
    for (const field of new Set([...Object.keys(row.before), ...Object.keys(row.after)])) {
      const from = row.before[field] ?? null;
      const to = row.after[field] ?? null;
      if (isDeepStrictEqual(from, to)) continue;
      const source = row.provenance[field]?.source;
      fields[field] = { from, to, source: source ? { kind: source.kind, id: source.id } : null };
    }
    if (Object.keys(fields).length > 0)
      changes.push({ entityId: row.id, entityType: row.entity_type, displayName: row.display_name, fields });
  }
  return changes;
}

async function readReport(
  client: PoolClient,
  real: (table: string) => string,
  connection: ConnectionRow,
  outboxBefore: number,
  { limit, sampleSize }: { limit: number; sampleSize: number },
): Promise<DryRunReport> {
  const id = connection.id;
  const ws = connection.workspace_id;

  const { rows: staged } = await client.query<{ changes: number; records: number; up_to: string }>(
    `SELECT count(*)::int AS changes, count(DISTINCT (entity_type, external_id))::int AS records,
            COALESCE(max(id), 0)::text AS up_to
       FROM staged_change WHERE connection_id = $1`,
    [id],
  );

  const { rows: linkRows } = await client.query<{
    entity_type: string;
    external_id: string;
    entity_id: string;
    display_name: string | null;
    existed: boolean;
    fields: Record<string, unknown>;
  }>(
    `SELECT l.entity_type, l.external_id, COALESCE(e.merged_into, e.id)::text AS entity_id, e.display_name,
            EXISTS (SELECT 1 FROM ${real('entity')} r WHERE r.id = COALESCE(e.merged_into, e.id)) AS existed, e.fields
       FROM pg_temp.source_link l JOIN pg_temp.entity e ON e.id = l.entity_id
      WHERE l.connection_id = $1
      ORDER BY l.entity_type, l.external_id`,
    [id],
  );
  const links = linkRows.filter((r) => r.existed);
  const creations = new Map<string, DryRunCreation>();
  for (const row of linkRows) {
    if (row.existed) continue;
    const creation = creations.get(row.entity_id) ?? {
      entityId: row.entity_id,
      entityType: row.entity_type,
      displayName: row.display_name,
      externalIds: [],
      fields: row.fields,
    };
    creation.externalIds.push(row.external_id);
    creations.set(row.entity_id, creation);
  }

  const { rows: changedRows } = await client.query<FieldsBeforeAfter>(
    `SELECT t.id::text AS id, t.entity_type, t.display_name, r.fields AS before, t.fields AS after, t.provenance
       FROM pg_temp.entity t JOIN ${real('entity')} r ON r.id = t.id
      WHERE t.fields IS DISTINCT FROM r.fields
      ORDER BY t.entity_type, t.id`,
  );
  const changes = fieldChangesOf(changedRows);

  const { rows: conflictRows } = await client.query<{
    id: string;
    entity_id: string;
    entity_type: string;
    field: string;
    kind: string;
    policy: string;
    status: string;
    candidates: DryRunConflict['candidates'];
    resolution: { winner?: DryRunConflict['winner'] } | null;
  }>(
    `SELECT t.id::text AS id, t.entity_id::text AS entity_id, COALESCE(e.entity_type, '') AS entity_type, t.field,
            t.kind, t.policy, t.status::text AS status, t.candidates, t.resolution
       FROM pg_temp.merge_conflict t
       LEFT JOIN ${real('merge_conflict')} r ON r.id = t.id
       LEFT JOIN pg_temp.entity e ON e.id = t.entity_id
      WHERE r.id IS NULL OR r.status IS DISTINCT FROM t.status
      ORDER BY t.entity_id, t.field, t.id`,
  );
  const conflicts = conflictRows.map(
    (r): DryRunConflict => ({
      id: r.id,
      entityId: r.entity_id,
      entityType: r.entity_type,
      field: r.field,
      kind: r.kind,
      policy: r.policy,
      status: r.status,
      candidates: r.candidates,
      winner: r.resolution?.winner ?? null,
    }),
  );

  const { rows: duplicateRows } = await client.query<DryRunPossibleDuplicate>(
    `SELECT t.id::text AS id, t.entity_type AS "entityType", t.entity_a::text AS "entityA",
            t.entity_b::text AS "entityB", t.score
       FROM pg_temp.possible_duplicate t LEFT JOIN ${real('possible_duplicate')} r ON r.id = t.id
      WHERE r.id IS NULL ORDER BY t.entity_type, t.id`,
  );

  // Writes owed now that were not before: new rows, and pending rows the stage rewrote.
  const { rows: writeRows } = await client.query<{
    connection_id: string;
    provider: ProviderKey;
    display_name: string | null;
    op: string;
    entity_id: string;
    entity_type: string;
    external_id: string | null;
    fields: Record<string, unknown>;
  }>(
    `SELECT t.connection_id::text AS connection_id, c.provider::text AS provider, c.display_name, t.op,
            t.entity_id::text AS entity_id, t.entity_type, t.external_id, t.fields
       FROM pg_temp.outbox t
       JOIN pg_temp.connection c ON c.id = t.connection_id
       LEFT JOIN ${real('outbox')} r ON r.id = t.id
      WHERE t.status = 'pending'
        AND (t.id > $1 OR r.id IS NULL OR r.status <> 'pending' OR r.fields IS DISTINCT FROM t.fields
             OR r.heads IS DISTINCT FROM t.heads)
      ORDER BY t.connection_id, t.op, t.id`,
    [outboxBefore],
  );
  const byTarget = new Map<string, DryRunWrites>();
  for (const row of writeRows) {
    const target = byTarget.get(row.connection_id) ?? {
      connectionId: row.connection_id,
      provider: row.provider,
      displayName: row.display_name,
      self: row.connection_id === id,
      total: 0,
      counts: {},
      sample: [],
    };
    target.total++;
    target.counts[row.op] = (target.counts[row.op] ?? 0) + 1;
    if (target.sample.filter((w) => w.op === row.op).length < sampleSize)
      target.sample.push({
        op: row.op,
        entityId: row.entity_id,
        entityType: row.entity_type,
        externalId: row.external_id,
        fields: row.fields,
      });
    byTarget.set(row.connection_id, target);
  }
  const writes = [...byTarget.values()].sort((a, b) =>
    a.self === b.self ? a.connectionId.localeCompare(b.connectionId) : a.self ? 1 : -1,
  );

  const creationList = [...creations.values()].sort(
    (a, b) => a.entityType.localeCompare(b.entityType) || a.entityId.localeCompare(b.entityId),
  );
  const lists = [links, creationList, changes, conflicts, duplicateRows];
  return {
    connectionId: id,
    workspaceId: ws,
    provider: connection.provider,
    displayName: connection.display_name,
    status: connection.status,
    complete: false,
    backfill: { seen: connection.backfill_seen, estimatedTotal: connection.backfill_total },
    computedAt: new Date().toISOString(),
    stagedUpTo: staged[0]?.up_to ?? '0',
    staged: { changes: staged[0]?.changes ?? 0, records: staged[0]?.records ?? 0 },
    summary: {
      links: links.length,
      creations: creationList.length,
      changes: changes.length,
      conflicts: conflicts.length,
      possibleDuplicates: duplicateRows.length,
      writes: writeRows.length,
      failures: 0,
    },
    links: links.slice(0, limit).map((r) => ({
      entityType: r.entity_type,
      externalId: r.external_id,
      entityId: r.entity_id,
      displayName: r.display_name,
    })),
    creations: creationList.slice(0, limit),
    changes: changes.slice(0, limit),
    conflicts: conflicts.slice(0, limit),
    possibleDuplicates: duplicateRows.slice(0, limit),
    writes,
    failures: [],
    waitingTargets: [],
    truncated: lists.some((list) => list.length > limit),
  };
}
