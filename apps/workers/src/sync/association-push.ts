import type { AssociationWrite, ConnectorError } from '@syncline/connectors';
import {
  ASSOCIATION_OPS,
  type AssociationFields,
  type AssociationOp,
  type ClaimedOutboxRow,
} from '@syncline/sync-stage';
import type { Pool } from 'pg';
import type { ConnectionHandle } from '../connections/connection-runtime';
import type { ClaimedRow } from './outbox-claim';
import type { PushOutcome } from './push.service';
import type { Refused } from './refused-writes';

/** A claimed association row. */
export type AssociationRow = Omit<ClaimedOutboxRow, 'op'> & { op: AssociationOp };

export const isAssociation = (row: ClaimedRow): row is AssociationRow =>
  (ASSOCIATION_OPS as readonly string[]).includes(row.op);

/** The rows of one association write, with its calls (a removal may name several record pairs). */
interface AssociationSend {
  row: AssociationRow;
  calls: AssociationWrite[];
}

/** What sending association rows needs of the push stage. */
export interface AssociationPushDeps {
  pool: Pool;
  /** Writes per connector call. */
  batch: number;
  /** Throws what the job retries (rate limited, transient, credentials refused); returns otherwise. */
  refused(handle: ConnectionHandle, error: ConnectorError): Promise<void>;
  /** Dead-letters a write the provider refused alone. */
  fail(handle: ConnectionHandle, write: Refused, error: ConnectorError): Promise<void>;
  /** Counts the writes the provider took (by op) and records the connection's success. */
  sent(handle: ConnectionHandle, ops: readonly AssociationOp[]): Promise<void>;
}

/**
 * Sends claimed association rows (relation-writeback.ts) to their CRM, after the batch's
 * records: a create sent before them is linked by then, and its association goes.
 */
export class AssociationPush {
  constructor(private readonly deps: AssociationPushDeps) {}

  /**
   * Association writes (relation-writeback.ts): both ends resolved to the connection's records
   * now, after the batch's creates were linked. One whose end has no record yet waits for the
   * create that makes it (`waiting`, made pending again when the sync stage folds the create's
   * receipt, see write-events.ts, or by the sweep); one whose end has neither is set aside. Sent per pair of types in batches.
   */
  async send(handle: ConnectionHandle, rows: readonly AssociationRow[], outcome: PushOutcome): Promise<void> {
    const ends = [
      ...new Set(rows.flatMap((r) => [r.entity_id, (r.fields as unknown as AssociationFields).toId])),
    ];
    // An entity with two records in the connection: the first by external id.
    const { rows: links } = await this.deps.pool.query<{ entity_id: string; external_id: string }>(
      `SELECT DISTINCT ON (entity_id) entity_id::text AS entity_id, external_id FROM source_link
        WHERE connection_id = $1 AND entity_id = ANY($2::uuid[]) ORDER BY entity_id, external_id COLLATE "C"`,
      [handle.id, ends],
    );
    const idOf = new Map(links.map((l) => [l.entity_id, l.external_id]));
    const ready: AssociationSend[] = [];
    const unresolved: string[] = [];
    for (const row of rows) {
      const fields = row.fields as unknown as AssociationFields;
      const base = {
        op: row.op,
        fromType: row.entity_type,
        toType: fields.toType as AssociationWrite['toType'],
        idempotencyKey: row.idempotency_key,
      };
      if (row.op === 'dissociate' && fields.pairs && fields.pairs.length > 0) {
        ready.push({ row, calls: fields.pairs.map(([fromId, toId]) => ({ ...base, fromId, toId })) });
        continue;
      }
      const fromId = idOf.get(row.entity_id);
      const toId = idOf.get(fields.toId);
      if (fromId === undefined || toId === undefined) unresolved.push(row.id);
      else ready.push({ row, calls: [{ ...base, fromId, toId }] });
    }
    if (unresolved.length > 0)
      await this.deps.pool.query(
        `UPDATE outbox o
            SET status = CASE
                -- Linked since the look above (the sync stage folded a create's receipt): goes now.
                WHEN EXISTS (SELECT 1 FROM source_link l WHERE l.connection_id = o.connection_id AND l.entity_id = o.entity_id)
                 AND EXISTS (SELECT 1 FROM source_link l WHERE l.connection_id = o.connection_id
                                AND l.entity_id::text = o.fields->>'toId')
                THEN 'pending'
                -- A create of an end is owed, on its way, or sent with its receipt not folded yet.
                WHEN EXISTS (
                  SELECT 1 FROM outbox c WHERE c.connection_id = o.connection_id AND c.op = 'create'
                     AND c.status IN ('pending', 'sending', 'sent') AND c.entity_id::text IN (o.entity_id::text, o.fields->>'toId'))
                THEN 'waiting' ELSE 'superseded' END,
                claimed_at = NULL, last_error = 'an end has no record in the connection'
          WHERE o.id = ANY($1::bigint[])`,
        [unresolved],
      );
    for (let i = 0; i < ready.length; i += this.deps.batch)
      await this.sendBatch(handle, ready.slice(i, i + this.deps.batch), outcome);
  }

  private async sendBatch(
    handle: ConnectionHandle,
    sends: readonly AssociationSend[],
    outcome: PushOutcome,
  ): Promise<void> {
    if (sends.length === 0) return;
    const ids = sends.map((s) => s.row.id);
    const push = handle.connector.pushAssociations;
    if (push === undefined) {
      await this.deps.pool.query(
        `UPDATE outbox SET status = 'superseded', last_error = 'the provider has no associations' WHERE id = ANY($1::bigint[])`,
        [ids],
      );
      return;
    }
    const result = await push(
      handle.ctx,
      sends.flatMap((s) => s.calls),
    );
    if (result.ok) {
      await this.deps.pool.query(
        `UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = ANY($1::bigint[])`,
        [ids],
      );
      outcome.sent += sends.length;
      await this.deps.sent(
        handle,
        sends.map((s) => s.row.op),
      );
      return;
    }
    const error = result.error;
    await this.deps.refused(handle, error);
    // One write at fault (a record gone): split until it stands alone, dead-letter it, send the rest.
    if (sends.length > 1) {
      const half = Math.ceil(sends.length / 2);
      await this.sendBatch(handle, sends.slice(0, half), outcome);
      await this.sendBatch(handle, sends.slice(half), outcome);
      return;
    }
    const { row } = sends[0]!;
    await this.deps.fail(
      handle,
      {
        rowIds: [row.id],
        entityId: row.entity_id,
        op: row.op,
        fields: row.fields,
        workspaceId: row.workspace_id,
      },
      error,
    );
    outcome.failed++;
  }
}
