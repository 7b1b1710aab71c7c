import { createHash } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { canonicalJson, type EntityType, type ProviderKey } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import {
  DERIVED_TABLE_NAMES,
  LOG_EVENT_COLUMNS,
  type LogEventRow,
  type LogTransaction,
  toLogEvent,
} from '@syncline/log';
import { isWritable, receiptEventKeySql, SyncStage as SyncHandler, updateKey } from '@syncline/sync-stage';
import type { Pool, PoolClient } from 'pg';
import {
  type FieldsBeforeAfter,
  fieldChangesOf,
  handleIsolating,
  ident,
  realSchema,
  shadow,
  skipAdvisoryLocks,
} from '../dry-run/dry-run-report';
import { SYNC_GROUP } from '../sync/sync-group';

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

/** The replay cannot rebuild what was asked (a reason for the admin, not a bug). */
export class ReplayRefused extends Error {
  override name = 'ReplayRefused';
}

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

/**
 * The replay's own tables, all session-private and dropped at the end of the transaction,
 * made before a preview's transaction turns READ ONLY (which refuses CREATE, even of a
 * temporary table, but not writes to one).
 */
async function createWorkTables(client: PoolClient): Promise<void> {
  const tables = [
    'replay_offsets (partition int PRIMARY KEY, committed bigint)',
    'replay_entities (id uuid PRIMARY KEY)',
    'replay_records (connection_id uuid, entity_type text, external_id text, PRIMARY KEY (connection_id, entity_type, external_id))',
    'replay_operations (id uuid PRIMARY KEY)',
    'replay_events (partition int, "offset" bigint, PRIMARY KEY (partition, "offset"))',
    'replay_after_entities (id uuid)',
    `replay_before_entity (id uuid PRIMARY KEY, entity_type text, display_name text, fields jsonb, provenance jsonb,
       heads text[], version bigint, merged_into uuid, created_at timestamptz(3))`,
    `replay_before_link (connection_id uuid, entity_type text, external_id text, entity_id uuid, provider_version text,
       canonical uuid, created_at timestamptz(3), PRIMARY KEY (connection_id, entity_type, external_id))`,
    'replay_before_conflict (id uuid PRIMARY KEY, entity_id uuid, field text, policy text, status text)',
    'replay_before_duplicate (id uuid PRIMARY KEY, status possible_duplicate_status, reviewed_by text, reviewed_at timestamptz(3))',
    'replay_before_operation (id uuid PRIMARY KEY, created_at timestamptz(3))',
    'replay_before_outbox (connection_id uuid, idempotency_key text, status text, fields jsonb, heads text[])',
  ];
  for (const table of tables) await client.query(`CREATE TEMP TABLE ${table} ON COMMIT DROP`);
}

async function committedOffsets(client: PoolClient): Promise<Map<number, number>> {
  const { rows } = await client.query<{ partition: number; committed_offset: string }>(
    'SELECT partition, committed_offset FROM consumer_offset WHERE group_name = $1',
    [SYNC_GROUP],
  );
  return new Map(rows.map((r) => [r.partition, Number(r.committed_offset)]));
}

/** The events of the workspace the live stage has folded: at or below its committed offset. */
const COMMITTED = `EXISTS (SELECT 1 FROM replay_offsets o WHERE o.partition = e.partition AND e."offset" <= o.committed)`;

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
  const outboxBefore = await rememberBefore(client);
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
  const report = await readReport(client, mode, outboxBefore, limit);
  report.scope.events = total;
  report.offsets = Object.fromEntries([...offsets].sort(([a], [b]) => a - b).map(([p, o]) => [String(p), o]));
  report.failures = failures.slice(0, limit);
  report.summary.failures = failures.length;
  report.truncated ||= failures.length > limit;
  return report;
}

/**
 * Fills replay_entities (entities whose derived state is removed), replay_records (source
 * records whose links are rebuilt) and replay_events (the events folded, in log order).
 */
async function selectScope(client: PoolClient, workspaceId: string, from: ReplayFrom): Promise<void> {
  const q = (sql: string, params: unknown[] = []) => client.query(sql, params);
  if (from === 'beginning') {
    await q('INSERT INTO replay_entities SELECT id FROM entity WHERE workspace_id = $1', [workspaceId]);
    await q(
      `INSERT INTO replay_records SELECT DISTINCT connection_id, entity_type, external_id FROM change_event e
        WHERE workspace_id = $1 AND ${COMMITTED}
       UNION SELECT connection_id, entity_type, external_id FROM source_link WHERE workspace_id = $1`,
      [workspaceId],
    );
    await q('INSERT INTO replay_operations SELECT id FROM identity_operation WHERE workspace_id = $1', [
      workspaceId,
    ]);
  } else {
    // The records with an event at or after the time, and the entities they stand for.
    await q(
      `INSERT INTO replay_records SELECT DISTINCT connection_id, entity_type, external_id FROM change_event e
        WHERE workspace_id = $1 AND event_time >= $2 AND ${COMMITTED}`,
      [workspaceId, from.eventTime],
    );
    await q(
      `INSERT INTO replay_entities
       SELECT en.id FROM replay_records r
         JOIN source_link l USING (connection_id, entity_type, external_id)
         JOIN entity en ON en.id IN (l.entity_id, (SELECT merged_into FROM entity WHERE id = l.entity_id))
       UNION
       -- Edits made in Syncline name their entity.
       SELECT en.id FROM replay_records r JOIN connection c ON c.id = r.connection_id AND c.provider = 'syncline'
         JOIN entity en ON en.id::text = r.external_id AND en.workspace_id = $1
       UNION
       -- Merges and unmerges name theirs.
       SELECT en.id FROM change_event e JOIN entity en ON en.workspace_id = $1 AND en.id::text IN (
                e.fields::jsonb->'identityOperation'->>'survivorId', e.fields::jsonb->'identityOperation'->>'absorbedId')
        WHERE e.workspace_id = $1 AND e.op = 'merge' AND e.event_time >= $2 AND ${COMMITTED}
       UNION
       SELECT en.id FROM change_event e
         JOIN identity_operation o ON o.id::text = e.fields::jsonb->'identityOperation'->>'undoes'
         JOIN entity en ON en.id::text IN (o.payload->>'survivorId', o.payload->>'absorbedId')
        WHERE e.workspace_id = $1 AND e.op = 'merge' AND e.event_time >= $2 AND ${COMMITTED}
       ON CONFLICT DO NOTHING`,
      [workspaceId, from.eventTime],
    );
    // Whatever those entities are tied to is rebuilt with them, until nothing more is added.
    for (let round = 0; round < 50; round++) {
      const { rowCount } = await q(
        `INSERT INTO replay_entities
         SELECT merged_into FROM entity WHERE id IN (SELECT id FROM replay_entities) AND merged_into IS NOT NULL
         UNION SELECT id FROM entity WHERE merged_into IN (SELECT id FROM replay_entities)
         UNION SELECT en.id FROM identity_operation o
                 JOIN entity en ON en.id::text IN (o.payload->>'survivorId', o.payload->>'absorbedId')
                WHERE o.workspace_id = $1
                  AND (o.payload->>'survivorId' IN (SELECT id::text FROM replay_entities)
                       OR o.payload->>'absorbedId' IN (SELECT id::text FROM replay_entities))
         -- An activity a rebuilt person takes part in names the person's id.
         UNION SELECT a.activity_id FROM entity_association a
                WHERE a.workspace_id = $1 AND a.party_id IN (SELECT id FROM replay_entities)
         -- Every record an entity holds is rebuilt, so every entity such a record is linked to.
         UNION SELECT l2.entity_id FROM source_link l
                 JOIN source_link l2 USING (connection_id, entity_type, external_id)
                WHERE l.entity_id IN (SELECT id FROM replay_entities)
         ON CONFLICT DO NOTHING`,
        [workspaceId],
      );
      if ((rowCount ?? 0) === 0) break;
    }
    await q(
      `INSERT INTO replay_records SELECT connection_id, entity_type, external_id FROM source_link
        WHERE entity_id IN (SELECT id FROM replay_entities) ON CONFLICT DO NOTHING`,
    );
    await q(
      `INSERT INTO replay_operations SELECT id FROM identity_operation o
        WHERE o.workspace_id = $1 AND (o.payload->>'survivorId' IN (SELECT id::text FROM replay_entities)
                                       OR o.payload->>'absorbedId' IN (SELECT id::text FROM replay_entities))`,
      [workspaceId],
    );
  }
  await q(
    `INSERT INTO replay_events (partition, "offset")
     SELECT e.partition, e."offset" FROM change_event e
      WHERE e.workspace_id = $1 AND ${COMMITTED}
        AND ((e.connection_id, e.entity_type, e.external_id) IN (SELECT * FROM replay_records)
             -- Edits of rebuilt entities, and the identity operations on them.
             OR (e.op <> 'merge' AND e.external_id IN (SELECT id::text FROM replay_entities)
                 AND e.connection_id IN (SELECT id FROM connection WHERE workspace_id = $1 AND provider = 'syncline'))
             OR (e.op = 'merge' AND (
                   e.fields::jsonb->'identityOperation'->>'operationId' IN (SELECT id::text FROM replay_operations)
                   OR e.fields::jsonb->'identityOperation'->>'survivorId' IN (SELECT id::text FROM replay_entities)
                   OR e.fields::jsonb->'identityOperation'->>'absorbedId' IN (SELECT id::text FROM replay_entities))))`,
    [workspaceId],
  );
  await q('ANALYZE replay_events');
}

/**
 * Refuses to rebuild a record whose history is gone from the log (retention deletes events
 * every group has read): a fold without it would lose what it brought. A link known only
 * from our own write (a record we created, whose echo is not on the log yet) is kept as it is.
 * A participant's link (`mailto:<address>`, a meeting's attendee or a mail's correspondent)
 * has no events of its own: the meetings and mails that name it make it again.
 */
async function refuseIncompleteHistory(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ n: number; sample: string | null }>(
    `SELECT count(*)::int AS n, min(l.entity_type || ' ' || l.external_id) AS sample
       FROM source_link l JOIN connection c ON c.id = l.connection_id AND c.provider <> 'syncline'
      WHERE l.entity_id IN (SELECT id FROM replay_entities)
        AND NOT (l.entity_type = 'person' AND l.external_id LIKE 'mailto:%')
        AND NOT EXISTS (SELECT 1 FROM change_event e JOIN replay_events r USING (partition, "offset")
                         WHERE e.connection_id = l.connection_id AND e.entity_type = l.entity_type
                           AND e.external_id = l.external_id)
        AND NOT EXISTS (SELECT 1 FROM write_receipt w WHERE w.connection_id = l.connection_id
                           AND w.entity_type = l.entity_type AND w.external_id = l.external_id)`,
  );
  const found = rows[0];
  if (found !== undefined && found.n > 0)
    throw new ReplayRefused(
      `history_incomplete: the change log no longer holds any event of ${found.n} linked record(s) ` +
        `(e.g. ${found.sample}), deleted by retention or never there; a rebuild would lose them`,
    );
}

/**
 * Keeps what the comparison needs and what the log does not carry: the entities, links and
 * conflicts as they stood; versions (a rebuilt entity's version must end above every version
 * any worker cached); provider versions and links known from our own writes; dismissed
 * duplicates (a decision made in the API, not on the log); when operations were made; and
 * which receipts had been applied. Returns the outbox's highest id.
 */
async function rememberBefore(client: PoolClient): Promise<number> {
  const q = (sql: string) => client.query(sql);
  await q(
    `INSERT INTO replay_before_entity
     SELECT id, entity_type, display_name, fields, provenance, heads, version, merged_into, created_at
       FROM entity WHERE id IN (SELECT id FROM replay_entities)`,
  );
  await q(
    `INSERT INTO replay_before_link
     SELECT l.connection_id, l.entity_type, l.external_id, l.entity_id, l.provider_version,
            COALESCE(e.merged_into, e.id) AS canonical, l.created_at
       FROM source_link l JOIN entity e ON e.id = l.entity_id
      WHERE (l.connection_id, l.entity_type, l.external_id) IN (SELECT * FROM replay_records)`,
  );
  await q(
    `INSERT INTO replay_before_conflict
     SELECT id, entity_id, field, policy, status::text AS status FROM merge_conflict
      WHERE entity_id IN (SELECT id FROM replay_entities)`,
  );
  await q(
    `INSERT INTO replay_before_duplicate
     SELECT id, status, reviewed_by, reviewed_at FROM possible_duplicate
      WHERE status = 'dismissed'
        AND (entity_a IN (SELECT id FROM replay_entities) OR entity_b IN (SELECT id FROM replay_entities))`,
  );
  await q(
    `INSERT INTO replay_before_operation
     SELECT id, created_at FROM identity_operation WHERE id IN (SELECT id FROM replay_operations)`,
  );
  await q(
    `INSERT INTO replay_before_outbox
     SELECT connection_id, idempotency_key, status, fields, heads FROM outbox
      WHERE entity_id IN (SELECT id FROM replay_entities) AND status IN ('pending', 'sending')`,
  );
  const { rows } = await client.query<{ max: string | null }>('SELECT max(id)::text AS max FROM outbox');
  return Number(rows[0]?.max ?? 0);
}

/**
 * Removes the derived state of the rebuilt entities. Their pending writes were computed from
 * the state being replaced: set aside (the rebuild owes again what the final state owes,
 * reviving a row whose key it recomputes). Rows a pusher has claimed are on their way and
 * stay as they are. Receipts of their writes are applied again, each at its echo on the log
 * as the live stage applied it (see restoreKept for synced heads).
 */
/**
 * The ids records' entities have now, for the rebuild to give back: which of an entity's
 * records the rebuild meets first need not be the one the live stage met first (the passes
 * are simulated), and the id derived from that record would then differ. Each id goes to the
 * first record that creates an entity, once. Entities an identity operation (merge, unmerge)
 * named keep the derived ids the operations refer to. Read before the derived state is cleared.
 */
async function liveEntityIds(
  client: PoolClient,
  workspaceId: string,
): Promise<(record: { connectionId: string; entityType: string; externalId: string }) => string | undefined> {
  const { rows } = await client.query<{ key: string; entity_id: string }>(
    `SELECT l.connection_id::text || '|' || l.entity_type || '|' || l.external_id AS key, l.entity_id::text AS entity_id
       FROM source_link l
      WHERE l.workspace_id = $1
        AND NOT EXISTS (SELECT 1 FROM identity_operation o
                         WHERE o.workspace_id = $1
                           AND l.entity_id::text IN (o.payload->>'survivorId', o.payload->>'absorbedId'))`,
    [workspaceId],
  );
  const ids = new Map(rows.map((r) => [r.key, r.entity_id]));
  const given = new Set<string>();
  return ({ connectionId, entityType, externalId }) => {
    const id = ids.get(`${connectionId}|${entityType}|${externalId}`);
    if (id === undefined || given.has(id)) return undefined;
    given.add(id);
    return id;
  };
}

async function clearDerived(client: PoolClient, workspaceId: string): Promise<void> {
  const q = (sql: string, params: unknown[] = []) => client.query(sql, params);
  const inScope = 'entity_id IN (SELECT id FROM replay_entities)';
  // A provider merge still waiting is no value computed from that state: it stays owed as it is.
  await q(
    `UPDATE outbox SET status = 'superseded' WHERE ${inScope} AND status = 'pending' AND op <> 'merge'`,
  );
  // Receipts and claims come off the log again (write-events.ts) as the fold reaches them. A
  // receipt stored before receipts went on the log has no event: it stays as it is.
  await q(
    `DELETE FROM write_receipt w WHERE ${inScope}
        AND EXISTS (SELECT 1 FROM change_event e
                     WHERE e.connection_id = w.connection_id
                       AND e.event_key = ${receiptEventKeySql('w.connection_id', 'w.idempotency_key')})`,
  );
  await q(`DELETE FROM write_claim WHERE ${inScope}`);
  await q(`DELETE FROM merge_conflict WHERE ${inScope}`);
  await q(`DELETE FROM entity_synced_heads WHERE ${inScope}`);
  await q(`DELETE FROM entity_doc_change WHERE ${inScope}`);
  await q(`DELETE FROM entity_doc WHERE ${inScope}`);
  await q('DELETE FROM identity_operation WHERE id IN (SELECT id FROM replay_operations)');
  await q(
    'DELETE FROM source_link WHERE (connection_id, entity_type, external_id) IN (SELECT * FROM replay_records)',
  );
  // The real tables would cascade these from the entities; a preview's copies have no foreign keys.
  await q(`DELETE FROM source_link WHERE ${inScope}`);
  await q(`DELETE FROM match_key WHERE ${inScope}`);
  await q(
    `DELETE FROM possible_duplicate WHERE entity_a IN (SELECT id FROM replay_entities) OR entity_b IN (SELECT id FROM replay_entities)`,
  );
  await q('DELETE FROM entity_association WHERE activity_id IN (SELECT id FROM replay_entities)');
  // Rows a rebuilt record carries are written again from its events; derived ones of a rebuilt
  // person or company are derived again; a kept record's row pointing at a rebuilt entity waits,
  // unresolved, for that entity's record to be linked again (as a late record would).
  await q(
    `DELETE FROM entity_relation WHERE kind = 'crm'
        AND (connection_id, from_type, from_external_id) IN (SELECT * FROM replay_records)`,
  );
  await q(
    `DELETE FROM entity_relation WHERE from_id IN (SELECT id FROM replay_entities)
        OR (kind = 'derived' AND to_id IN (SELECT id FROM replay_entities))`,
  );
  await q('UPDATE entity_relation SET to_id = NULL WHERE to_id IN (SELECT id FROM replay_entities)');
  // Which associations Syncline wrote is the stage's to decide again along the same events: the
  // keys it derives meet the writes already sent (see relation-writeback.ts).
  await q(
    `DELETE FROM relation_mirror WHERE from_id IN (SELECT id FROM replay_entities)
        OR to_id IN (SELECT id FROM replay_entities)`,
  );
  await q('UPDATE entity SET merged_into = NULL WHERE id IN (SELECT id FROM replay_entities)');
  await q('DELETE FROM entity WHERE id IN (SELECT id FROM replay_entities) AND workspace_id = $1', [
    workspaceId,
  ]);
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

/**
 * Puts back what the log does not carry, and settles the outbox on the final state.
 *
 * Synced heads (what each connection has seen) are not copied back: they come out of the
 * rebuild itself, from each connection's inbound events and from our write receipts, which
 * are events of the log (write-events.ts) applied again at their echoes, as the live stage
 * applied them. The old heads are not kept on purpose: they carry
 * the old policy's claims (catchUp moved a connection to "holds the current values" as the
 * old policy resolved them), and under a new policy keeping them would take a connection to
 * hold a winner it was never written. A receipt whose heads the rebuilt document lacks (its
 * history changed) moves nothing, and its echo still marks the fields as held with the value
 * we wrote; so a connection may come out having seen less than it did, and is then owed the
 * final value once more, never less and never an old value.
 */
async function restoreKept(client: PoolClient): Promise<void> {
  const q = (sql: string) => client.query(sql);
  // Above every version any worker has cached: each process's SyncHandler reloads the document
  // (lockAndValidate drops a cached copy whose version it did not write).
  await q(
    `UPDATE entity e SET version = e.version + b.version + 1, created_at = b.created_at
       FROM replay_before_entity b WHERE e.id = b.id`,
  );
  await q(
    `UPDATE source_link l SET provider_version = COALESCE(b.provider_version, l.provider_version),
            created_at = CASE WHEN l.entity_id = b.entity_id THEN b.created_at ELSE l.created_at END
       FROM replay_before_link b
      WHERE l.connection_id = b.connection_id AND l.entity_type = b.entity_type AND l.external_id = b.external_id`,
  );
  // Records known only from our own create before its receipt went on the log (a receipt
  // stored before receipts were logged): linked again as they were.
  await q(
    `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id, provider_version)
     SELECT e.workspace_id, b.connection_id, b.entity_type, b.external_id, e.id, b.provider_version
       FROM replay_before_link b JOIN entity e ON e.id = b.entity_id
      WHERE NOT EXISTS (SELECT 1 FROM change_event ev JOIN replay_events r USING (partition, "offset")
                         WHERE ev.connection_id = b.connection_id AND ev.entity_type = b.entity_type
                           AND ev.external_id = b.external_id)
     ON CONFLICT DO NOTHING`,
  );
  await q(
    `UPDATE possible_duplicate p SET status = b.status, reviewed_by = b.reviewed_by, reviewed_at = b.reviewed_at
       FROM replay_before_duplicate b WHERE p.id = b.id AND p.status = 'open'`,
  );
  await q(
    `UPDATE identity_operation o SET created_at = b.created_at FROM replay_before_operation b WHERE o.id = b.id`,
  );
  // The entities the rebuild left (the rebuilt ones and any its records now belong to).
  await q(
    `INSERT INTO replay_after_entities
     SELECT id FROM entity WHERE id IN (SELECT id FROM replay_entities)
     UNION SELECT l.entity_id FROM source_link l
            WHERE (l.connection_id, l.entity_type, l.external_id) IN (SELECT * FROM replay_records)`,
  );
  // Every pending update or delete row the stage leaves carries what its target is owed at
  // the entity's last heads (each batch sets the earlier ones aside). A create keeps one key
  // per (entity, target), so a row from an earlier batch may still carry earlier values: it is
  // computed again from the final view, or set aside if the target holds the record by now
  // (a create turned into an update would send those earlier values).
  await q(
    `UPDATE outbox o SET status = 'superseded'
      WHERE o.status = 'pending' AND o.op = 'create' AND o.entity_id IN (SELECT id FROM replay_after_entities)
        AND EXISTS (SELECT 1 FROM source_link l WHERE l.entity_id = o.entity_id AND l.connection_id = o.connection_id)`,
  );
  await q(
    `UPDATE outbox o SET fields = jsonb_strip_nulls(e.fields), heads = e.heads
       FROM entity e
      WHERE e.id = o.entity_id AND o.status = 'pending' AND o.op = 'create'
        AND o.entity_id IN (SELECT id FROM replay_after_entities)`,
  );
}

/**
 * An update row's key is (entity, target, heads): a new policy over the same history gives
 * the same heads, and the stage's upsert then meets the row already sent at those heads
 * (with the old policy's values) and leaves it be, so the target would be owed the new
 * winner by no row at all. For every rebuilt entity, what each linked target is owed at the
 * final state and no pending row carries is written now, under a key of its content too,
 * unless the row sent at those heads carried exactly that (its echo is still on its way).
 */
async function oweFinalValues(client: PoolClient, tx: LogTransaction, engine: MergeEngine): Promise<void> {
  const { rows: entities } = await client.query<{
    id: string;
    workspace_id: string;
    entity_type: EntityType;
  }>(
    `SELECT id, workspace_id, entity_type FROM entity
      WHERE id IN (SELECT id FROM replay_after_entities) AND merged_into IS NULL ORDER BY id`,
  );
  if (entities.length === 0) return;
  const { rows: targets } = await client.query<{
    entity_id: string;
    connection_id: string;
    external_id: string;
    provider: ProviderKey;
  }>(
    `SELECT l.entity_id, l.connection_id, l.external_id, c.provider::text AS provider
       FROM source_link l JOIN connection c ON c.id = l.connection_id
      WHERE l.entity_id = ANY($1::uuid[]) AND c.provider <> 'syncline' AND c.status <> 'disconnected'
        AND NOT COALESCE((SELECT e.flags->'deletedIn' FROM entity e WHERE e.id = l.entity_id), '[]'::jsonb) <> '[]'::jsonb`,
    [entities.map((e) => e.id)],
  );
  const store = new PgMergeStore(tx);
  const rows: Record<string, unknown>[] = [];
  for (const entity of entities) {
    const mine = targets.filter(
      (t) => t.entity_id === entity.id && isWritable(t.provider, entity.entity_type),
    );
    if (mine.length === 0) continue;
    const outcome = await engine.outcome(
      { entityId: entity.id, workspaceId: entity.workspace_id, entityType: entity.entity_type },
      store,
    );
    for (const target of mine) {
      const owed = outcome.owed.get(target.connection_id) ?? [];
      if (owed.length === 0) continue;
      const fields = Object.fromEntries(owed.map((f) => [f, outcome.values[f] ?? null]));
      rows.push({
        workspace_id: entity.workspace_id,
        entity_id: entity.id,
        entity_type: entity.entity_type,
        connection_id: target.connection_id,
        external_id: target.external_id,
        fields,
        prior: outcome.held.get(target.connection_id) ?? {},
        heads: outcome.heads,
        key: updateKey(entity.id, target.connection_id, outcome.heads),
        content: createHash('sha256').update(canonicalJson(fields)).digest('base64url').slice(0, 16),
      });
    }
  }
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, prior, heads,
                         idempotency_key)
     SELECT r.workspace_id, r.entity_id, r.entity_type, r.connection_id, 'update', r.external_id, r.fields, r.prior,
            r.heads, r.key || '.' || r.content
       FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text, connection_id uuid,
            external_id text, fields jsonb, prior jsonb, heads text[], key text, content text)
      WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.entity_id = r.entity_id AND o.connection_id = r.connection_id
                           AND o.status = 'pending')
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.key
                           AND o.fields = r.fields)
     ON CONFLICT (connection_id, idempotency_key) DO UPDATE
       SET fields = EXCLUDED.fields, prior = EXCLUDED.prior, heads = EXCLUDED.heads, status = 'pending', attempts = 0
       WHERE outbox.status IN ('pending', 'superseded')`,
    [JSON.stringify(rows)],
  );
}

async function readReport(
  client: PoolClient,
  mode: ReplayMode,
  _outboxBefore: number,
  limit: number,
): Promise<ReplayReport> {
  const { rows: scope } = await client.query<{ records: number; entities: number }>(
    `SELECT (SELECT count(*)::int FROM replay_records) AS records,
            (SELECT count(*)::int FROM replay_after_entities) AS entities`,
  );

  const { rows: changedRows } = await client.query<FieldsBeforeAfter>(
    `SELECT e.id::text AS id, e.entity_type, e.display_name, b.fields AS before, e.fields AS after, e.provenance
       FROM entity e JOIN replay_before_entity b ON b.id = e.id
      WHERE e.fields IS DISTINCT FROM b.fields
      ORDER BY e.entity_type, e.id`,
  );
  const changes: ReplayReport['changes'] = fieldChangesOf(changedRows);

  const { rows: created } = await client.query<ReplayReport['created'][number]>(
    `SELECT e.id::text AS "entityId", e.entity_type AS "entityType", e.display_name AS "displayName"
       FROM entity e WHERE e.id IN (SELECT id FROM replay_after_entities)
        AND NOT EXISTS (SELECT 1 FROM replay_before_entity b WHERE b.id = e.id)
      ORDER BY e.entity_type, e.id`,
  );
  const { rows: gone } = await client.query<ReplayReport['gone'][number]>(
    `SELECT b.id::text AS "entityId", b.entity_type AS "entityType", b.display_name AS "displayName"
       FROM replay_before_entity b WHERE NOT EXISTS (SELECT 1 FROM entity e WHERE e.id = b.id)
      ORDER BY b.entity_type, b.id`,
  );

  const { rows: conflictRows } = await client.query<{
    id: string;
    entity_id: string;
    field: string;
    policy: string;
    before: string | null;
    after: string | null;
  }>(
    `WITH after AS (
       SELECT id, entity_id, field, policy, status::text AS status FROM merge_conflict
        WHERE entity_id IN (SELECT id FROM replay_after_entities))
     SELECT COALESCE(a.id, b.id)::text AS id, COALESCE(a.entity_id, b.entity_id)::text AS entity_id,
            COALESCE(a.field, b.field) AS field, COALESCE(a.policy, b.policy) AS policy,
            b.status AS before, a.status AS after
       FROM after a FULL JOIN replay_before_conflict b ON b.id = a.id
      WHERE a.status IS DISTINCT FROM b.status
      ORDER BY 2, 3, 1`,
  );
  const conflicts: ReplayReport['conflicts'] = conflictRows
    // A conflict recorded as settled both before and after, or new and settled at once, changes nothing in the inbox.
    .filter((r) => r.before === 'open' || r.after === 'open' || r.before === null || r.after === null)
    .map((r) => ({
      id: r.id,
      entityId: r.entity_id,
      field: r.field,
      policy: r.policy,
      change: r.after === 'open' || (r.before === null && r.after !== null) ? 'appeared' : 'disappeared',
      before: r.before,
      after: r.after,
    }));

  const { rows: links } = await client.query<ReplayReport['links'][number]>(
    `WITH after AS (
       SELECT l.connection_id, l.entity_type, l.external_id, COALESCE(e.merged_into, e.id) AS canonical
         FROM source_link l JOIN entity e ON e.id = l.entity_id
        WHERE (l.connection_id, l.entity_type, l.external_id) IN (SELECT * FROM replay_records))
     SELECT COALESCE(a.connection_id, b.connection_id)::text AS "connectionId",
            COALESCE(a.entity_type, b.entity_type) AS "entityType",
            COALESCE(a.external_id, b.external_id) AS "externalId",
            b.canonical::text AS "from", a.canonical::text AS "to"
       FROM after a FULL JOIN replay_before_link b
         ON b.connection_id = a.connection_id AND b.entity_type = a.entity_type AND b.external_id = a.external_id
      WHERE a.canonical IS DISTINCT FROM b.canonical
      ORDER BY 1, 2, 3`,
  );

  // Owed now and not before: pending rows the rebuild left whose content was not pending already.
  const { rows: writes } = await client.query<ReplayReport['writes'][number]>(
    `SELECT o.connection_id::text AS "connectionId", o.entity_id::text AS "entityId", o.op, o.fields
       FROM outbox o
      WHERE o.entity_id IN (SELECT id FROM replay_after_entities) AND o.status = 'pending'
        AND NOT EXISTS (SELECT 1 FROM replay_before_outbox b
                         WHERE b.connection_id = o.connection_id AND b.idempotency_key = o.idempotency_key
                           AND b.fields = o.fields AND b.heads = o.heads)
      ORDER BY o.connection_id, o.id`,
  );

  const appeared = conflicts.filter((c) => c.change === 'appeared').length;
  const lists = [changes, created, gone, conflicts, links, writes];
  return {
    mode,
    computedAt: new Date().toISOString(),
    scope: { records: scope[0]?.records ?? 0, entities: scope[0]?.entities ?? 0, events: 0 },
    offsets: {},
    summary: {
      changes: changes.length,
      created: created.length,
      gone: gone.length,
      conflictsAppeared: appeared,
      conflictsDisappeared: conflicts.length - appeared,
      linksMoved: links.length,
      writes: writes.length,
      failures: 0,
    },
    changes: changes.slice(0, limit),
    created: created.slice(0, limit),
    gone: gone.slice(0, limit),
    conflicts: conflicts.slice(0, limit),
    links: links.slice(0, limit),
    writes: writes.slice(0, limit),
    failures: [],
    truncated: lists.some((list) => list.length > limit),
  };
}

/** The tables a replay rebuilds: the log's derived tables (@syncline/log's registry). */
export const REBUILT_TABLES: readonly string[] = DERIVED_TABLE_NAMES;
