import type { LogTransaction } from '@syncline/log';
import type { TargetConnection } from '../connections';
import { updateKeyByValues } from '../idempotency-key';
import { owedWrites } from '../owed-writes';
import type { Touched } from '../touched';
import type { OutboxRow } from './outbox-row';

/**
 * Archives of folded copies and provider merges; a key already queued (sent, say) is left be.
 * Returns the connections owed them.
 */
export async function queueFoldWrites(tx: LogTransaction, rows: readonly OutboxRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  await tx.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads,
                         idempotency_key)
     SELECT workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads, idempotency_key
       FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text,
            connection_id uuid, op text, external_id text, fields jsonb, heads text[], idempotency_key text)
     ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
    [JSON.stringify(rows)],
  );
  return rows.map((row) => row.connection_id);
}

/**
 * Queues what the batch's entities owe each connection (owedWrites), reading where their
 * records stand first. Every row carries all a target is owed at its heads, so a pending update
 * or delete that the new rows do not replace is set aside. Returns the rows owed (some may have
 * been queued already).
 */
export async function writeOutbox(
  tx: LogTransaction,
  touched: readonly Touched[],
  connectionsOf: (workspaceId: string) => Promise<readonly TargetConnection[]>,
): Promise<OutboxRow[]> {
  if (touched.length === 0) return [];
  const { rows: linkRows } = await tx.query<{
    entity_id: string;
    connection_id: string;
    external_id: string;
  }>(
    // An entity with two records in one connection (a duplicate there, linked by a key) is
    // written on the first by external id, as the push's associations take it: a rule of the
    // records themselves, so a fold of the log picks the one the live stage picked.
    `SELECT DISTINCT ON (entity_id, connection_id) entity_id, connection_id, external_id FROM source_link
      WHERE entity_id = ANY($1::uuid[]) ORDER BY entity_id, connection_id, external_id COLLATE "C"`,
    [touched.map((t) => t.entityId)],
  );
  const links = new Map<string, Map<string, string>>();
  for (const row of linkRows) {
    const byConnection = links.get(row.entity_id) ?? new Map<string, string>();
    byConnection.set(row.connection_id, row.external_id);
    links.set(row.entity_id, byConnection);
  }
  const { rows: flagRows } = await tx.query<{
    id: string;
    deleted_in: string[] | null;
    recreate_in: string[] | null;
    create_again: Record<string, string> | null;
  }>(
    `SELECT id, ARRAY(SELECT jsonb_array_elements(flags->'deletedIn')->>'connectionId') AS deleted_in,
            ARRAY(SELECT jsonb_array_elements_text(COALESCE(flags->'recreateIn', '[]'::jsonb))) AS recreate_in,
            flags->'createAgain' AS create_again
       FROM entity WHERE id = ANY($1::uuid[])`,
    [touched.map((t) => t.entityId)],
  );
  const deletedIn = new Map(flagRows.map((r) => [r.id, new Set(r.deleted_in ?? [])]));
  // Connections where the provider merged the entity's own record away (undoProviderMerges).
  const recreateIn = new Map(flagRows.map((r) => [r.id, new Set(r.recreate_in ?? [])]));
  // Connections where an unmerge unlinked the copy an earlier create made (applyIdentityOperation).
  const createAgain = new Map(flagRows.map((r) => [r.id, new Map(Object.entries(r.create_again ?? {}))]));

  const outbox: OutboxRow[] = [];
  for (const entry of touched) {
    if (entry.outcome === undefined || entry.frozen) continue;
    const targets = await connectionsOf(entry.workspaceId);
    outbox.push(
      ...owedWrites(
        {
          entityId: entry.entityId,
          workspaceId: entry.workspaceId,
          entityType: entry.entityType,
          outcome: entry.outcome,
          deletedIn: entry.deletedIn,
          linked: links.get(entry.entityId) ?? new Map<string, string>(),
          everDeletedIn: deletedIn.get(entry.entityId) ?? new Set<string>(),
          recreateIn: recreateIn.get(entry.entityId) ?? new Set<string>(),
          createAgain: createAgain.get(entry.entityId) ?? new Map<string, string>(),
        },
        targets,
      ),
    );
  }
  // Association rows are weighed on their own (oweAssociations).
  await tx.query(
    `UPDATE outbox o SET status = 'superseded'
      WHERE o.entity_id = ANY($1::uuid[]) AND o.status = 'pending' AND o.op IN ('update', 'delete')
        AND NOT (o.connection_id || '|' || o.idempotency_key = ANY($2::text[]))`,
    [touched.map((t) => t.entityId), outbox.map((r) => `${r.connection_id}|${r.idempotency_key}`)],
  );
  if (outbox.length === 0) return [];
  // A row a pusher holds is never locked here: a batch holding one to its end would stall the
  // pusher marking it sent, or deadlock with it (the pusher holding rows the batch comes to
  // next). An upsert locks the row it meets even where it changes nothing, so rows already
  // queued are updated by an UPDATE, which passes over a row that stopped matching while it
  // waited (a pusher took it) without keeping its lock, and only keys not queued at all are
  // inserted.
  // An update owed at heads whose write to the target is already taken (on its way, or sent)
  // without some of its fields or values: a receipt folded since showed the target holding
  // other values than that write assumed (a write of an earlier state landed after it was
  // computed), so the target is owed what that write lacked. Queued under the key told apart by
  // its values; the same owed values again are the same write.
  const rows = outbox.map((row) => ({
    ...row,
    values_key:
      row.op === 'update' ? updateKeyByValues(row.entity_id, row.connection_id, row.heads, row.fields) : null,
  }));
  await tx.query(
    `WITH given AS (
       SELECT r.* FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text,
              connection_id uuid, op text, external_id text, fields jsonb, prior jsonb, heads text[],
              idempotency_key text, values_key text)
        -- The connection list is cached for a moment: nothing is owed to one disconnected since.
        WHERE NOT EXISTS (SELECT 1 FROM connection c WHERE c.id = r.connection_id AND c.status = 'disconnected')),
     keyed AS (
       SELECT g.workspace_id, g.entity_id, g.entity_type, g.connection_id, g.op, g.external_id, g.fields,
              g.prior, g.heads,
              CASE WHEN g.values_key IS NOT NULL AND EXISTS (
                     SELECT 1 FROM outbox o
                      WHERE o.connection_id = g.connection_id AND o.idempotency_key = g.idempotency_key
                        AND o.status NOT IN ('pending', 'superseded')
                        AND EXISTS (SELECT 1 FROM jsonb_each(g.fields) f
                                     WHERE o.fields -> f.key IS DISTINCT FROM f.value))
                   THEN g.values_key ELSE g.idempotency_key END AS idempotency_key
         FROM given g),
     r AS (
       SELECT r.*,
              -- When an update's receipt says it was sent (see the insert): a probe of the key
              -- per row, in the projection, so the rows keep the order they are owed in (their
              -- ids are the order they are pushed in; a join may reorder them).
              CASE WHEN r.op = 'update' THEN
                (SELECT w.sent_at FROM write_receipt w
                  WHERE w.connection_id = r.connection_id AND w.idempotency_key = r.idempotency_key)
              END AS receipt_sent_at
         FROM keyed r),
     -- A row set aside (a stale write refused) is owed again if the target still lacks it.
     owed_again AS (
       UPDATE outbox o
          SET fields = r.fields, prior = COALESCE(r.prior, '{}'), heads = r.heads, attempts = 0,
              status = CASE WHEN r.receipt_sent_at IS NULL THEN 'pending' ELSE 'sent' END,
              sent_at = COALESCE(o.sent_at, r.receipt_sent_at)
         FROM r
        WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key
          AND o.status IN ('pending', 'superseded'))
     -- An update whose receipt the log has already brought was sent: a fold that meets the
     -- receipt before the edit that owed the write (they came in other batches live) queues it
     -- sent, as the live stage's row ended. Only an update's key names one write (its heads); a
     -- create or delete is owed again under its key after an unmerge or a record made again.
     INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, prior, heads,
                         idempotency_key, status, sent_at)
     SELECT r.workspace_id, r.entity_id, r.entity_type, r.connection_id, r.op, r.external_id, r.fields,
            COALESCE(r.prior, '{}'), r.heads, r.idempotency_key,
            CASE WHEN r.receipt_sent_at IS NULL THEN 'pending' ELSE 'sent' END, r.receipt_sent_at
       FROM r
      WHERE NOT EXISTS (SELECT 1 FROM outbox o
                         WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key)
     ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
    [JSON.stringify(rows)],
  );
  return outbox;
}
