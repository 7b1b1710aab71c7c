import type { ConnectorError } from '@syncline/connectors';
import { storableJson, storableText } from '@syncline/core';
import { type CoalescedWrite, holdsUniqueValueOf } from '@syncline/sync-stage';
import type { Pool } from 'pg';

/**
 * What the outbox keeps of writes a provider refused (PushService decides which is which):
 * a dead letter, a stale write held for the record's fresh version, a create set aside for
 * the sync stage to settle on the record that already holds its value.
 */

/** What a dead letter names of a refused write. */
export type Refused = Pick<CoalescedWrite, 'rowIds' | 'entityId' | 'fields' | 'workspaceId'> & { op: string };

/** The write's rows fail, and a dead letter names it with the provider's answer. */
export async function deadLetterWrite(
  pool: Pool,
  connectionId: string,
  write: Refused,
  error: ConnectorError,
): Promise<void> {
  await pool.query(`UPDATE outbox SET status = 'failed', last_error = $2 WHERE id = ANY($1::bigint[])`, [
    write.rowIds,
    `${error.code}: ${error.message}`,
  ]);
  await pool.query(
    `INSERT INTO dead_letter (id, workspace_id, connection_id, source, payload, error_code, error_message, attempts)
     VALUES (gen_random_uuid(), $1, $2, 'push', $3, $4, $5, 1)`,
    [
      write.workspaceId,
      connectionId,
      // A provider's message may quote what PostgreSQL cannot hold: written out (storableText).
      JSON.stringify(
        storableJson({
          outboxIds: write.rowIds,
          entityId: write.entityId,
          op: write.op,
          fields: write.fields,
        }),
      ),
      error.code,
      storableText(error.message),
    ],
  );
}

/**
 * Rows refused as stale (the record changed since we last saw it). A row still carrying the
 * entity's current heads is still exactly what is owed: it waits (pending) for the record's
 * fresh version, which merging what the provider holds brings. A row behind the current heads
 * has been, or will be, recomputed: it is set aside.
 */
export async function holdStaleRows(pool: Pool, rowIds: readonly string[], refusal: string): Promise<void> {
  await pool.query(
    `UPDATE outbox o
        SET status = CASE WHEN o.heads = e.heads AND o.attempts < 20 THEN 'pending' ELSE 'superseded' END,
            -- When it was refused: the claim waits longer after each refusal (outbox-claim.ts).
            claimed_at = now(), last_error = $2
       FROM entity e
      WHERE e.id = o.entity_id AND o.id = ANY($1::bigint[])`,
    [rowIds, refusal],
  );
}

/**
 * A create the provider refused because `record`, one of its own, already holds the write's
 * unique value: set aside (a row the sync stage settled first is left as it is). Whether the
 * record is the entity's (the rows done), another entity's (the pair up for review) or left to
 * identity is the sync stage's to decide, when it folds the `existing` event the pusher
 * appended before (existing-record.ts).
 */
export async function setRefusedCreateAside(
  pool: Pool,
  write: Pick<CoalescedWrite, 'rowIds'>,
  refusal: string,
): Promise<void> {
  await pool.query(
    `UPDATE outbox SET status = 'superseded', claimed_at = NULL, last_error = $2
      WHERE id = ANY($1::bigint[]) AND status = 'sending'`,
    [write.rowIds, refusal],
  );
}

/** How many times a create waits for the record holding its unique value to be written back. */
export const CREATE_HOLD_ATTEMPTS = 10;

/**
 * A create the provider refused because `externalId` holds its unique value, while that record
 * is another entity's whose own values no longer hold it: the value is on its way out, in a
 * write of ours still owed to the record (an unmerge gives each person back their address, and
 * the create of one can come before the write that takes the address off the other's record).
 * The create waits (pending, its next claim a second later per attempt) instead of being put up
 * for review, up to CREATE_HOLD_ATTEMPTS claims. Returns whether it was held.
 */
export async function holdCreateForHolder(
  pool: Pool,
  connectionId: string,
  write: Pick<CoalescedWrite, 'rowIds' | 'entityId' | 'entityType' | 'fields'>,
  externalId: string,
  refusal: string,
): Promise<boolean> {
  const { rows } = await pool.query<{ fields: Record<string, unknown> }>(
    `SELECT e.fields FROM source_link l JOIN entity e ON e.id = l.entity_id
      WHERE l.connection_id = $1 AND l.entity_type = $2 AND l.external_id = $3 AND l.entity_id <> $4
        AND e.merged_into IS NULL`,
    [connectionId, write.entityType, externalId, write.entityId],
  );
  const holder = rows[0];
  if (holder === undefined || holdsUniqueValueOf(write.entityType, write.fields, holder.fields)) return false;
  const { rowCount } = await pool.query(
    `UPDATE outbox SET status = 'pending', claimed_at = now(), last_error = $2
      WHERE id = ANY($1::bigint[]) AND status = 'sending' AND attempts < $3`,
    [
      write.rowIds,
      `${refusal} (record ${externalId} is to give the value up: the create waits)`,
      CREATE_HOLD_ATTEMPTS,
    ],
  );
  return (rowCount ?? 0) > 0;
}
