import type { ProviderKey, Queryable } from '@syncline/core';
import { entityCreateKeySql } from './idempotency-key';
import { belongsIn, CONNECTORS, CRM_RECORD_TYPES, isPersonal, type PersonalTarget } from './writeback-rules';

/**
 * Queues a create in the connection of every record of its workspace it lacks (people,
 * companies and deals only from another CRM; in a person's own calendar or task list only
 * what is theirs: see writeback-rules), keyed per (entity, target) so that running it twice
 * never makes a second record. Returns how many were queued. OutboxSweep.reconcile runs it
 * once a connection's backfill is linked; the dry run of a connection runs it too, to report
 * the creates that enabling the connection leads to.
 */
export async function queueReconcileCreates(
  db: Queryable,
  connection: { id: string; workspace_id: string; provider: ProviderKey },
): Promise<number> {
  const writable = CONNECTORS[connection.provider].writable;
  const fromCrmOnly = writable.filter((t) => CRM_RECORD_TYPES.has(t));
  const anywhere = writable.filter((t) => !CRM_RECORD_TYPES.has(t));
  const lacking = `FROM entity e
      WHERE e.workspace_id = $2 AND e.merged_into IS NULL AND e.fields <> '{}'::jsonb
        AND (e.entity_type = ANY($3::text[])
             OR (e.entity_type = ANY($4::text[]) AND EXISTS (
                   SELECT 1 FROM source_link l JOIN connection o ON o.id = l.connection_id
                    WHERE l.entity_id = e.id AND o.provider = 'hubspot' AND o.id <> $1::uuid)))
        AND NOT EXISTS (SELECT 1 FROM source_link l WHERE l.entity_id = e.id AND l.connection_id = $1::uuid)
        AND NOT COALESCE(e.flags->'deletedIn', '[]'::jsonb) @> jsonb_build_array(jsonb_build_object('connectionId', $1::text))`;
  const params: unknown[] = [connection.id, connection.workspace_id, anywhere, fromCrmOnly];
  let only = '';
  if (isPersonal(connection.provider)) {
    // A person's own calendar or task list: only the records that are theirs (belongsIn).
    const { rows: targets } = await db.query<PersonalTarget>(
      `SELECT id, provider::text AS provider, status::text AS status, account_address AS "accountAddress"
         FROM connection WHERE workspace_id = $1 AND provider <> 'syncline'`,
      [connection.workspace_id],
    );
    const target = targets.find((t) => t.id === connection.id);
    if (target === undefined) return 0;
    const { rows: candidates } = await db.query<{
      id: string;
      entity_type: (typeof writable)[number];
      fields: Record<string, unknown>;
    }>(`SELECT e.id, e.entity_type, e.fields ${lacking}`, params);
    const theirs = candidates
      .filter((e) => belongsIn(target, e.entity_type, e.fields, targets))
      .map((e) => e.id);
    if (theirs.length === 0) return 0;
    params.push(theirs);
    only = ' AND e.id = ANY($5::uuid[])';
  }
  const { rowCount } = await db.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key)
     SELECT e.workspace_id, e.id, e.entity_type, $1::uuid, 'create', jsonb_strip_nulls(e.fields), e.heads,
            ${entityCreateKeySql('e', '$1')}
       ${lacking}${only}
     ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
    params,
  );
  return rowCount ?? 0;
}
