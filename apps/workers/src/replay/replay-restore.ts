import { type MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { EntityType, ProviderKey } from '@syncline/core';
import type { LogTransaction } from '@syncline/log';
import {
  isInvitationCopy,
  isWritable,
  updateKey,
  updateKeyByValues,
  writableField,
} from '@syncline/sync-stage';
import type { PoolClient } from 'pg';

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
export async function restoreKept(client: PoolClient): Promise<void> {
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
 * A replay rebuilds under the policies saved now (that is what it is for: a policy change
 * applied to the past), not under those each change met on the log: the saved sets are put in
 * force before the fold, and the fold does not meet the `policy` events (replay-scope.ts
 * leaves them out). The last `policy` event of each type carries the same set, so the live stage
 * goes on from the same policies.
 */
export async function putSavedPolicies(client: PoolClient, workspaceId: string): Promise<void> {
  await client.query('DELETE FROM policy_in_force WHERE workspace_id = $1', [workspaceId]);
  await client.query(
    `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
     SELECT t.workspace_id, t.entity_type,
            COALESCE((SELECT jsonb_object_agg(p.field, CASE WHEN p.policy = 'priority'
                                                          THEN jsonb_build_object('kind', p.policy, 'order', p.priority)
                                                          ELSE jsonb_build_object('kind', p.policy) END)
                        FROM field_policy p
                       WHERE p.workspace_id = t.workspace_id AND p.entity_type = t.entity_type), '{}'::jsonb),
            COALESCE((SELECT max(r.version) FROM field_policy_revision r
                       WHERE r.workspace_id = t.workspace_id AND r.entity_type = t.entity_type), 0)
       FROM (SELECT workspace_id, entity_type FROM field_policy WHERE workspace_id = $1
             UNION SELECT workspace_id, entity_type FROM field_policy_revision WHERE workspace_id = $1) t`,
    [workspaceId],
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
/** Documents read per statement before the final values are computed. */
const PREFETCH = 500;

export async function oweFinalValues(
  client: PoolClient,
  tx: LogTransaction,
  engine: MergeEngine,
): Promise<void> {
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
    account_address: string | null;
  }>(
    `SELECT l.entity_id, l.connection_id, l.external_id, c.provider::text AS provider, c.account_address
       FROM source_link l JOIN connection c ON c.id = l.connection_id
      WHERE l.entity_id = ANY($1::uuid[]) AND c.provider <> 'syncline' AND c.status <> 'disconnected'
        AND NOT COALESCE((SELECT e.flags->'deletedIn' FROM entity e WHERE e.id = l.entity_id), '[]'::jsonb) <> '[]'::jsonb`,
    [entities.map((e) => e.id)],
  );
  const store = new PgMergeStore(tx);
  const targetsOf = new Map<string, (typeof targets)[number][]>();
  for (const target of targets) {
    const list = targetsOf.get(target.entity_id);
    if (list === undefined) targetsOf.set(target.entity_id, [target]);
    else list.push(target);
  }
  const owing = entities.flatMap((entity) => {
    const mine = (targetsOf.get(entity.id) ?? []).filter((t) => isWritable(t.provider, entity.entity_type));
    return mine.length === 0 ? [] : [{ entity, mine }];
  });
  const rows: Record<string, unknown>[] = [];
  for (const [i, { entity, mine }] of owing.entries()) {
    // The documents the cache no longer holds are read a chunk at a time, not one by one.
    if (i % PREFETCH === 0)
      await engine.prefetch(
        owing.slice(i, i + PREFETCH).map((o) => o.entity.id),
        store,
      );
    const outcome = await engine.outcome(
      { entityId: entity.id, workspaceId: entity.workspace_id, entityType: entity.entity_type },
      store,
    );
    for (const target of mine) {
      // As the live writeback owes them (owedWrites): never a field the connector only
      // reports, never an invitation another person organizes.
      const owed = (outcome.owed.get(target.connection_id) ?? []).filter((f) =>
        writableField(target.provider, entity.entity_type, f),
      );
      if (owed.length === 0) continue;
      const personal = {
        id: target.connection_id,
        provider: target.provider,
        status: 'live',
        accountAddress: target.account_address,
      };
      if (isInvitationCopy(personal, entity.entity_type, outcome.values)) continue;
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
        own_key: updateKeyByValues(entity.id, target.connection_id, outcome.heads, fields),
      });
    }
  }
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, prior, heads,
                         idempotency_key)
     SELECT r.workspace_id, r.entity_id, r.entity_type, r.connection_id, 'update', r.external_id, r.fields, r.prior,
            r.heads, r.own_key
       FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text, connection_id uuid,
            external_id text, fields jsonb, prior jsonb, heads text[], key text, own_key text)
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
