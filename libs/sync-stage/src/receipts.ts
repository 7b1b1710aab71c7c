import type { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { CLAIM_LIFETIME_MS } from './write-events';

/** A write of ours to a record, as its receipt (or its claimed outbox row) tells it. */
export interface Receipt {
  /** Connection and idempotency key: the receipt's key. */
  key: string;
  /** What the target held of the written fields before the write (never-held ones absent). */
  prior: Record<string, unknown>;
  /** The entity whose state was written: a receipt of another entity moves nothing here. */
  entityId: string;
  /** When the write started: a report of the record from before it does not reflect it. */
  sentAt: Date;
  heads: string[];
  fields: Record<string, unknown>;
  createdAt: Date;
  applied: boolean;
  /**
   * A write still on its way (claimed, no receipt on the log yet): the provider may have
   * applied it, and its report may be on the log before the receipt. It recognises that
   * report as our echo, and nothing more: it moves no synced heads.
   */
  inFlight?: boolean;
}

/** How long an applied receipt still recognises a late echo of what it wrote. */
const RECENT_MS = 10 * 60_000;

/**
 * Receipts of the batch's records: those not yet applied, and the latest ones of each record
 * (recent ones only), whose written values recognise an echo however late it comes; and the
 * writes still on their way to them (claimed, no receipt yet: CLAIM_LIFETIME_MS). Both come
 * off the log (write-events.ts), and "recent" is measured in the log's own time (when the
 * report came, against when the receipt or claim came), never the clock of the fold: a replay
 * sees what the live stage saw. Each report takes its own with `receiptsFor`.
 */
export async function receiptsOf(
  tx: LogTransaction,
  events: readonly LogEvent[],
): Promise<Map<string, Receipt[]>> {
  const earliest = new Date(Math.min(...events.map((e) => e.ingestedAt.getTime())));
  const { rows } = await tx.query<{
    key: string;
    receipt_key: string;
    prior: Record<string, unknown>;
    entity_id: string;
    sent_at: Date;
    heads: string[];
    fields: Record<string, unknown>;
    created_at: Date;
    applied: boolean;
    in_flight: boolean;
  }>(
    `WITH t AS (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(conn, type, ext))
     SELECT * FROM (
       SELECT r.connection_id || '|' || r.entity_type || '|' || r.external_id AS key,
              r.connection_id || '|' || r.idempotency_key AS receipt_key, r.prior, r.entity_id, r.sent_at,
              r.heads, r.fields, r.created_at, r.applied_at IS NOT NULL AS applied, false AS in_flight,
              r.idempotency_key
         FROM write_receipt r
         JOIN t ON r.connection_id = t.conn AND r.entity_type = t.type AND r.external_id = t.ext
        WHERE r.applied_at IS NULL OR r.created_at > $4::timestamptz - make_interval(secs => $5::double precision / 1000)
       UNION ALL
       SELECT w.connection_id || '|' || w.entity_type || '|' || w.external_id,
              'in-flight|' || w.connection_id || '|' || w.idempotency_key || '|' || w.attempt, w.prior,
              w.entity_id, w.claimed_at, w.heads, w.fields,
              -- applied: an in-flight write is never applied as a receipt (it moves no heads).
              w.ingested_at, true, true, w.idempotency_key
         FROM write_claim w
         JOIN t ON w.connection_id = t.conn AND w.entity_type = t.type AND w.external_id = t.ext
        WHERE w.ingested_at > $4::timestamptz - make_interval(secs => $6::double precision / 1000)) all_writes
      ORDER BY in_flight, created_at, idempotency_key`,
    [
      events.map((e) => e.connectionId),
      events.map((e) => e.entityType),
      events.map((e) => e.externalId),
      earliest,
      RECENT_MS,
      CLAIM_LIFETIME_MS,
    ],
  );
  const out = new Map<string, Receipt[]>();
  for (const row of rows) {
    const list = out.get(row.key) ?? [];
    list.push({
      key: row.receipt_key,
      prior: row.prior,
      entityId: row.entity_id,
      sentAt: row.sent_at,
      heads: row.heads,
      fields: row.fields,
      createdAt: row.created_at,
      applied: row.applied,
      ...(row.in_flight ? { inFlight: true } : {}),
    });
    out.set(row.key, list);
  }
  return out;
}

/** The receipts and claims a report of a record is sorted against, as of when the report came. */
export function receiptsFor(all: ReadonlyMap<string, Receipt[]>, event: LogEvent): Receipt[] {
  const ofRecord = all.get(`${event.connectionId}|${event.entityType}|${event.externalId}`) ?? [];
  const came = event.ingestedAt.getTime();
  return ofRecord.filter((r) =>
    r.inFlight === true
      ? r.createdAt.getTime() > came - CLAIM_LIFETIME_MS
      : !r.applied || r.createdAt.getTime() > came - RECENT_MS,
  );
}

export async function markReceiptsApplied(tx: LogTransaction, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  // Keys are "connection|idempotency key" (a connection id holds no "|"). Matched by the
  // primary key's columns: a match on the joined text would read the whole table.
  const split = keys.map((k) => [k.slice(0, k.indexOf('|')), k.slice(k.indexOf('|') + 1)] as const);
  await tx.query(
    `UPDATE write_receipt w SET applied_at = now()
       FROM unnest($1::uuid[], $2::text[]) AS k(connection_id, idempotency_key)
      WHERE w.connection_id = k.connection_id AND w.idempotency_key = k.idempotency_key
        AND w.applied_at IS NULL`,
    [split.map(([c]) => c), split.map(([, i]) => i)],
  );
}

/**
 * Connections hold what we wrote them, even before their report of it comes back (which
 * applies the receipt): a merge or unmerge reads what each holds, and one behind would be
 * owed too little (an address the survivor had lent it stays, and a create that looks
 * records up by address takes the wrong one). The receipts stay unapplied for that report.
 */
export async function seeWritten(
  tx: LogTransaction,
  engine: MergeEngine,
  store: PgMergeStore,
  ref: { entityId: string; workspaceId: string; entityType: string },
): Promise<void> {
  const { rows } = await tx.query<{ connection_id: string; heads: string[] }>(
    `SELECT connection_id, heads FROM write_receipt
      WHERE entity_id = $1 AND applied_at IS NULL ORDER BY created_at, idempotency_key`,
    [ref.entityId],
  );
  for (const row of rows)
    await engine.markSeen(ref.entityId, ref.workspaceId, row.connection_id, row.heads, store);
}
