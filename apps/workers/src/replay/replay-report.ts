import type { PoolClient } from 'pg';
import { type FieldsBeforeAfter, fieldChangesOf } from '../dry-run/dry-run-report';
import type { ReplayMode } from './replay-rebuild';

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

/**
 * Keeps what the comparison needs and what the log does not carry: the entities, links and
 * conflicts as they stood; versions (a rebuilt entity's version must end above every version
 * any worker cached); provider versions and links known from our own writes; dismissed
 * duplicates (a dismissal made before dismissals went on the log has no event); when operations were made; and
 * which receipts had been applied.
 */
export async function rememberBefore(client: PoolClient): Promise<void> {
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
}

export async function readReport(client: PoolClient, mode: ReplayMode, limit: number): Promise<ReplayReport> {
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
