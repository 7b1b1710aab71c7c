import type { ProviderKey, Queryable } from '@syncline/core';
import { createKeySql } from './idempotency-key';
import { CONNECTORS, CRM_RECORD_TYPES } from './writeback-rules';

/**
 * Queues a create in the connection of every record of its workspace it lacks (people,
 * companies and deals only from another CRM; see writeback-rules), keyed per (entity,
 * target) so that running it twice never makes a second record. Returns how many were
 * queued. PushService.reconcile runs it once a connection's backfill is linked; the dry run
 * of a connection runs it too, to report the creates that enabling the connection leads to.
 */
export async function queueReconcileCreates(
  db: Queryable,
  connection: { id: string; workspace_id: string; provider: ProviderKey },
): Promise<number> {
  const writable = CONNECTORS[connection.provider].writable;
  const fromCrmOnly = writable.filter((t) => CRM_RECORD_TYPES.has(t));
  const anywhere = writable.filter((t) => !CRM_RECORD_TYPES.has(t));
  const { rowCount } = await db.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key)
     SELECT e.workspace_id, e.id, e.entity_type, $1::uuid, 'create', jsonb_strip_nulls(e.fields), e.heads,
            ${createKeySql('e.id', '$1')}
       FROM entity e
      WHERE e.workspace_id = $2 AND e.merged_into IS NULL AND e.fields <> '{}'::jsonb
        AND (e.entity_type = ANY($3::text[])
             OR (e.entity_type = ANY($4::text[]) AND EXISTS (
                   SELECT 1 FROM source_link l JOIN connection o ON o.id = l.connection_id
                    WHERE l.entity_id = e.id AND o.provider = 'hubspot' AND o.id <> $1::uuid)))
        AND NOT EXISTS (SELECT 1 FROM source_link l WHERE l.entity_id = e.id AND l.connection_id = $1::uuid)
        AND NOT COALESCE(e.flags->'deletedIn', '[]'::jsonb) @> jsonb_build_array(jsonb_build_object('connectionId', $1::text))
     ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
    [connection.id, connection.workspace_id, anywhere, fromCrmOnly],
  );
  return rowCount ?? 0;
}
