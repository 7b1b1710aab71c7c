import { receiptEventKeySql } from '@syncline/sync-stage';
import type { PoolClient } from 'pg';
import { SYNC_GROUP } from '../sync/sync-group';
import type { ReplayFrom } from './replay-rebuild';

/** The replay cannot rebuild what was asked (a reason for the admin, not a bug). */
export class ReplayRefused extends Error {
  override name = 'ReplayRefused';
}

/**
 * The replay's own tables, all session-private and dropped at the end of the transaction,
 * made before a preview's transaction turns READ ONLY (which refuses CREATE, even of a
 * temporary table, but not writes to one).
 */
export async function createWorkTables(client: PoolClient): Promise<void> {
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

export async function committedOffsets(client: PoolClient): Promise<Map<number, number>> {
  const { rows } = await client.query<{ partition: number; committed_offset: string }>(
    'SELECT partition, committed_offset FROM consumer_offset WHERE group_name = $1',
    [SYNC_GROUP],
  );
  return new Map(rows.map((r) => [r.partition, Number(r.committed_offset)]));
}

/** The events of the workspace the live stage has folded: at or below its committed offset. */
export const COMMITTED = `EXISTS (SELECT 1 FROM replay_offsets o WHERE o.partition = e.partition AND e."offset" <= o.committed)`;

/**
 * A replay rebuilds under the policies saved now (replay-restore.ts putSavedPolicies): the
 * `policy` events, which put each set in force where it stands on the log, are not folded.
 */
const NOT_POLICY = `e.op <> 'policy'`;

/**
 * Fills replay_entities (entities whose derived state is removed), replay_records (source
 * records whose links are rebuilt) and replay_events (the events folded, in log order).
 */
export async function selectScope(client: PoolClient, workspaceId: string, from: ReplayFrom): Promise<void> {
  const q = (sql: string, params: unknown[] = []) => client.query(sql, params);
  if (from === 'beginning') {
    await q('INSERT INTO replay_entities SELECT id FROM entity WHERE workspace_id = $1', [workspaceId]);
    await q(
      `INSERT INTO replay_records SELECT DISTINCT connection_id, entity_type, external_id FROM change_event e
        WHERE workspace_id = $1 AND ${COMMITTED} AND ${NOT_POLICY}
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
        WHERE workspace_id = $1 AND event_time >= $2 AND ${COMMITTED} AND ${NOT_POLICY}`,
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
      WHERE e.workspace_id = $1 AND ${COMMITTED} AND ${NOT_POLICY}
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
export async function refuseIncompleteHistory(client: PoolClient): Promise<void> {
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
 * The ids records' entities have now, for the rebuild to give back: which of an entity's
 * records the rebuild meets first need not be the one the live stage met first (the passes
 * are simulated), and the id derived from that record would then differ. Each id goes to the
 * first record that creates an entity, once. Entities an identity operation (merge, unmerge)
 * named keep the derived ids the operations refer to. Read before the derived state is cleared.
 */
export async function liveEntityIds(
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

/**
 * Removes the derived state of the rebuilt entities. Their pending writes were computed from
 * the state being replaced: set aside (the rebuild owes again what the final state owes,
 * reviving a row whose key it recomputes). Rows a pusher has claimed are on their way and
 * stay as they are. Receipts of their writes are applied again, each at its echo on the log
 * as the live stage applied it (see restoreKept for synced heads).
 */
export async function clearDerived(client: PoolClient, workspaceId: string): Promise<void> {
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
