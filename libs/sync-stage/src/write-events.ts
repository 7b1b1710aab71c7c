import { ENTITY_TYPES, type SourceChangeInput } from '@syncline/core';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { z } from 'zod';
import { versionMayReplace } from './provider-version';

/**
 * The push stage's knowledge, as events on the log. What the sync stage learns from our own
 * writes goes through the log like every other change, on the partition of the record it
 * concerns, so it is folded in order with that record's reports, and a replay of the log
 * from zero folds it at the same place:
 *
 * | event     | appended                               | folded into                                   |
 * |-----------|----------------------------------------|-----------------------------------------------|
 * | `claim`   | by the pusher, before it sends an update | `write_claim`: a write on its way (its echo may come before its receipt) |
 * | `receipt` | by the pusher, once the provider took the write, before the rows are marked sent | `write_receipt`; the outbox row `sent`; a created record's `source_link`; the record's provider version; associations waiting for the create owed |
 *
 * Each is keyed (event key) by the write's connection and idempotency key (a claim also by
 * its attempt), so a pusher that dies and sends again appends nothing twice.
 */

/** The field of a `claim` or `receipt` event's `fields` that carries the write. */
export const WRITE_FIELD = 'write';

/** How long a claim recognises its echo without a receipt: a write gone that long failed or was retried. */
export const CLAIM_LIFETIME_MS = 10 * 60_000;

const isoDate = z.iso.datetime({ offset: true }).transform((v) => new Date(v));
const values = z.record(z.string(), z.unknown());

const claimSchema = z.strictObject({
  idempotencyKey: z.string().min(1).max(400),
  entityId: z.uuid(),
  attempt: z.int().min(0),
  fields: values,
  prior: values,
  heads: z.array(z.string()),
  claimedAt: isoDate,
});

const receiptSchema = z.strictObject({
  idempotencyKey: z.string().min(1).max(400),
  entityId: z.uuid(),
  /** A create links the record it made; a merge (the provider's) leaves only the version. */
  op: z.enum(['create', 'update', 'merge']),
  fields: values,
  prior: values,
  heads: z.array(z.string()),
  contentHash: z.string().min(1),
  sentAt: isoDate,
});

export type WriteClaim = z.input<typeof claimSchema>;
export type WriteReceiptInput = z.input<typeof receiptSchema>;

interface Target {
  workspaceId: string;
  connectionId: string;
  entityType: (typeof ENTITY_TYPES)[number];
  /** The target's record: the one written to (a create's: the one it made). */
  externalId: string;
}

/** The claim of a write about to be sent to `target`'s record. */
export function writeClaimChange(target: Target, claim: WriteClaim): SourceChangeInput {
  return {
    ...target,
    op: 'claim',
    eventKey: `claim:${target.connectionId}:${claim.idempotencyKey}:${claim.attempt}`,
    eventTime: claim.claimedAt,
    fields: { [WRITE_FIELD]: claim },
  };
}

/** The event key of a write's receipt on the log: one receipt per connection and idempotency key. */
export const receiptEventKey = (connectionId: string, idempotencyKey: string): string =>
  `receipt:${connectionId}:${idempotencyKey}`;

/** SQL: `receiptEventKey` of a connection and idempotency key given as SQL expressions. */
export const receiptEventKeySql = (connectionId: string, idempotencyKey: string): string =>
  `'receipt:' || ${connectionId}::text || ':' || ${idempotencyKey}`;

/** The receipt of a write the provider took, with the record's version after it. */
export function writeReceiptChange(
  target: Target,
  receipt: WriteReceiptInput,
  providerVersion: string | null,
): SourceChangeInput {
  return {
    ...target,
    op: 'receipt',
    eventKey: receiptEventKey(target.connectionId, receipt.idempotencyKey),
    eventTime: receipt.sentAt,
    fields: { [WRITE_FIELD]: receipt },
    ...(providerVersion === null ? {} : { providerVersion }),
  };
}

export const isWriteEvent = (event: Pick<LogEvent, 'op'>): boolean =>
  event.op === 'claim' || event.op === 'receipt';

/** A receipt of a create: it links the record the create made. */
export const isCreateReceipt = (event: Pick<LogEvent, 'op' | 'fields'>): boolean =>
  event.op === 'receipt' && (event.fields[WRITE_FIELD] as { op?: unknown } | undefined)?.op === 'create';

// A malformed write on the log is a bug upstream: thrown, the event goes to the dead letters.
const parse = <T extends z.ZodType>(schema: T, event: LogEvent): z.output<T> => {
  const parsed = schema.safeParse(event.fields[WRITE_FIELD]);
  if (!parsed.success)
    throw new Error(`malformed ${event.op} event ${event.eventKey}: ${parsed.error.message}`);
  return parsed.data;
};

/**
 * Folds claim and receipt events, each at its place among its record's reports (segmentsOf
 * in sync-stage.ts places them). Returns the connections owed a push: those
 * whose associations were waiting for a record a receipt links.
 */
export async function foldWriteEvents(tx: LogTransaction, events: readonly LogEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const claims = events.filter((e) => e.op === 'claim').map((e) => ({ e, w: parse(claimSchema, e) }));
  const receipts = events.filter((e) => e.op === 'receipt').map((e) => ({ e, w: parse(receiptSchema, e) }));
  if (claims.length > 0)
    await tx.query(
      `INSERT INTO write_claim (connection_id, idempotency_key, attempt, workspace_id, entity_id, entity_type,
                                external_id, fields, prior, heads, claimed_at, ingested_at)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(connection_id uuid, idempotency_key text, attempt int,
              workspace_id uuid, entity_id uuid, entity_type text, external_id text, fields jsonb, prior jsonb,
              heads text[], claimed_at timestamptz, ingested_at timestamptz)
       ON CONFLICT DO NOTHING`,
      [
        JSON.stringify(
          claims.map(({ e, w }) => ({
            connection_id: e.connectionId,
            idempotency_key: w.idempotencyKey,
            attempt: w.attempt,
            workspace_id: e.workspaceId,
            entity_id: w.entityId,
            entity_type: e.entityType,
            external_id: e.externalId,
            fields: w.fields,
            prior: w.prior,
            heads: w.heads,
            claimed_at: w.claimedAt.toISOString(),
            ingested_at: e.ingestedAt.toISOString(),
          })),
        ),
      ],
    );
  // Claims never settled (the write failed, or was claimed again) are past use after their
  // lifetime (receiptsOf no longer reads them): dropped as their record's next write comes.
  await tx.query(
    `DELETE FROM write_claim w
      USING unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[]) AS t(conn, type, ext, at)
      WHERE w.connection_id = t.conn AND w.entity_type = t.type AND w.external_id = t.ext
        AND w.ingested_at < t.at - make_interval(secs => $5::double precision / 1000)`,
    [
      events.map((e) => e.connectionId),
      events.map((e) => e.entityType),
      events.map((e) => e.externalId),
      events.map((e) => e.ingestedAt),
      CLAIM_LIFETIME_MS,
    ],
  );
  if (receipts.length === 0) return [];
  const rows = receipts.map(({ e, w }) => ({
    connection_id: e.connectionId,
    idempotency_key: w.idempotencyKey,
    workspace_id: e.workspaceId,
    entity_id: w.entityId,
    entity_type: e.entityType,
    external_id: e.externalId,
    op: w.op,
    content_hash: w.contentHash,
    fields: w.fields,
    prior: w.prior,
    heads: w.heads,
    provider_version: e.providerVersion,
    sent_at: w.sentAt.toISOString(),
    created_at: e.ingestedAt.toISOString(),
  }));
  const json = JSON.stringify(rows);
  const recordset = `jsonb_to_recordset($1::jsonb) AS r(connection_id uuid, idempotency_key text, workspace_id uuid,
    entity_id uuid, entity_type text, external_id text, op text, content_hash text, fields jsonb, prior jsonb,
    heads text[], provider_version text, sent_at timestamptz, created_at timestamptz)`;
  // The write has landed: its claims are settled (a later echo is matched against the receipt).
  await tx.query(
    `DELETE FROM write_claim w USING ${recordset}
      WHERE w.connection_id = r.connection_id AND w.idempotency_key = r.idempotency_key`,
    [json],
  );
  // A merge changes no field we wrote: it leaves the survivor's version (below), no receipt.
  // Sent again under its key (a retry with other values), a receipt replaces the earlier one.
  await tx.query(
    `INSERT INTO write_receipt (connection_id, idempotency_key, workspace_id, entity_id, entity_type, external_id,
                                content_hash, fields, prior, heads, provider_version, sent_at, created_at)
     SELECT connection_id, idempotency_key, workspace_id, entity_id, entity_type, external_id, content_hash,
            fields, prior, heads, provider_version, sent_at, created_at
       FROM ${recordset} WHERE r.op <> 'merge'
     ON CONFLICT (connection_id, idempotency_key) DO UPDATE
       SET content_hash = EXCLUDED.content_hash, fields = EXCLUDED.fields, prior = EXCLUDED.prior,
           heads = EXCLUDED.heads, external_id = EXCLUDED.external_id,
           provider_version = EXCLUDED.provider_version, sent_at = EXCLUDED.sent_at,
           created_at = EXCLUDED.created_at, applied_at = NULL`,
    [json],
  );
  // The write is sent: in a fold from zero its row was owed again and is pending; live, the
  // pusher has it (sending) or has marked it already. A row the stage set aside stays so.
  await tx.query(
    `UPDATE outbox o SET status = 'sent', sent_at = COALESCE(o.sent_at, r.sent_at)
       FROM ${recordset}
      WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key
        AND o.status IN ('pending', 'sending')`,
    [json],
  );
  // A record we created is linked now, so later changes update it instead of creating again
  // (an entity erased meanwhile links nothing).
  const created = rows.filter((r) => r.op === 'create');
  const createdJson = JSON.stringify(created);
  if (created.length > 0)
    await tx.query(
      `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
       SELECT r.workspace_id, r.connection_id, r.entity_type, r.external_id, r.entity_id
         FROM ${recordset}
        WHERE EXISTS (SELECT 1 FROM entity e WHERE e.id = r.entity_id AND e.workspace_id = r.workspace_id)
       ON CONFLICT DO NOTHING`,
      [createdJson],
    );
  // The version our write left is what the next write is conditional on.
  await tx.query(
    `UPDATE source_link l SET provider_version = r.provider_version
       FROM ${recordset}
      WHERE r.provider_version IS NOT NULL AND l.connection_id = r.connection_id
        AND l.entity_type = r.entity_type AND l.external_id = r.external_id
        AND ${versionMayReplace('r.provider_version', 'l.provider_version')}`,
    [json],
  );
  if (created.length === 0) return [];
  // Associations that waited for the record a create made can go now.
  const { rows: owing } = await tx.query<{ connection_id: string }>(
    `UPDATE outbox o SET status = 'pending', claimed_at = NULL
       FROM ${recordset}
      WHERE o.connection_id = r.connection_id AND o.status = 'waiting'
        AND (o.entity_id = r.entity_id OR o.fields->>'toId' = r.entity_id::text)
     RETURNING o.connection_id::text AS connection_id`,
    [createdJson],
  );
  return [...new Set(owing.map((r) => r.connection_id))];
}
