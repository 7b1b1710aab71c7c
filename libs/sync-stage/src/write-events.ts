import { createHash } from 'node:crypto';
import { ENTITY_TYPES, type SourceChangeInput } from '@syncline/core';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { z } from 'zod';
import { foldRefusedCreate } from './existing-record';
import { mayReplace, versionMayReplace } from './provider-version';

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
 * | `existing` | by the pusher, when a create is refused because the record exists (on that record's partition), before the rows are set aside | the record's `source_link` or a `possible_duplicate`; the outbox rows settled (existing-record.ts) |
 * | `version` | by the pusher, when a write is refused as stale and the provider's current record is on the log already | the record's provider version (the report it names was merged before it) |
 *
 * Each is keyed (event key) by the write's connection and idempotency key (a claim also by
 * its attempt, an `existing` by its refusal's time), so a pusher that dies and sends again
 * appends nothing twice.
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
  /**
   * A create links the record it made; a merge (the provider's) leaves only the version, as
   * does a write of the insight properties Syncline owns (entity-insights.ts): no field of
   * the record moved.
   */
  op: z.enum(['create', 'update', 'merge', 'insights']),
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

/**
 * The version of a record the provider named when it refused a write as stale, the report of
 * that version (`reportKey`) being on the log already (a pull, a webhook, an earlier refusal):
 * after that report, on its partition, it leaves the link at that version, as the report's
 * merge would have, had a receipt of an older write not stored an older one after it. One
 * per report: a second refusal naming the same version appends nothing.
 */
export function recordVersionChange(
  record: Pick<SourceChangeInput, 'workspaceId' | 'connectionId' | 'entityType' | 'externalId' | 'eventTime'>,
  reportKey: string,
  providerVersion: string,
): SourceChangeInput {
  const digest = createHash('sha256').update(`${record.connectionId}\n${reportKey}`).digest('base64url');
  return {
    workspaceId: record.workspaceId,
    connectionId: record.connectionId,
    entityType: record.entityType,
    externalId: record.externalId,
    op: 'version',
    eventKey: `version:${record.connectionId}:${digest.slice(0, 32)}`,
    eventTime: record.eventTime,
    fields: { reportKey },
    providerVersion,
  };
}

export const isWriteEvent = (event: Pick<LogEvent, 'op'>): boolean =>
  event.op === 'claim' || event.op === 'receipt' || event.op === 'existing' || event.op === 'version';

/**
 * An event that may link its record: a create's receipt (the record the create made), or an
 * `existing` (the record a refused create found).
 */
export const mayLinkRecord = (event: Pick<LogEvent, 'op' | 'fields'>): boolean =>
  event.op === 'existing' ||
  (event.op === 'receipt' && (event.fields[WRITE_FIELD] as { op?: unknown } | undefined)?.op === 'create');

// A malformed write on the log is a bug upstream: thrown, the event goes to the dead letters.
const parse = <T extends z.ZodType>(schema: T, event: LogEvent): z.output<T> => {
  const parsed = schema.safeParse(event.fields[WRITE_FIELD]);
  if (!parsed.success)
    throw new Error(`malformed ${event.op} event ${event.eventKey}: ${parsed.error.message}`);
  return parsed.data;
};

/**
 * Folds the push stage's events, each at its place among its record's reports (segmentsOf in
 * sync-stage.ts places them): claims, receipts and versions in one statement, an `existing`
 * on its own (existing-record.ts). Returns the connections owed a push: those whose
 * associations were waiting for a record a receipt or an `existing` links.
 *
 * What the fold does, as if event by event in log order:
 * - a claim goes into `write_claim`;
 * - claims never settled (the write failed, or was claimed again) are past use after their
 *   lifetime (receiptsOf no longer reads them): dropped as their record's next event comes;
 * - a receipt settles its write's claims (a later echo is matched against the receipt), goes
 *   into `write_receipt` (sent again under its key with other values, it replaces the earlier
 *   one; a merge, the provider's, changes no field we wrote and leaves no receipt), marks its
 *   outbox row sent, links the record a create made, and leaves the record's version (what the
 *   next write is conditional on);
 * - a create's receipt releases the associations that waited for its record;
 * - a `version` leaves the record's version, as a receipt does.
 *
 * The statement's parts all read the table as it was before it: what one event of the batch
 * does to another's rows (a claim its receipt settles, a claim its record's later event finds
 * expired, the versions of two receipts of one record) is settled here first.
 */
export async function foldWriteEvents(tx: LogTransaction, events: readonly LogEvent[]): Promise<string[]> {
  // An `existing` reads the links as the events before it left them: the claims and receipts
  // between two of them are folded in one statement, each `existing` on its own (they are rare).
  const owed = new Set<string>();
  let start = 0;
  for (const [i, event] of events.entries()) {
    if (event.op !== 'existing') continue;
    for (const id of await foldClaimsAndReceipts(tx, events.slice(start, i))) owed.add(id);
    for (const id of await foldRefusedCreate(tx, event)) owed.add(id);
    start = i + 1;
  }
  for (const id of await foldClaimsAndReceipts(tx, events.slice(start))) owed.add(id);
  return [...owed];
}

/** foldWriteEvents for claims, receipts and versions: one statement. */
async function foldClaimsAndReceipts(tx: LogTransaction, events: readonly LogEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const claims = events.filter((e) => e.op === 'claim').map((e) => ({ e, w: parse(claimSchema, e) }));
  const receipts = events.filter((e) => e.op === 'receipt').map((e) => ({ e, w: parse(receiptSchema, e) }));
  const recordOf = (e: LogEvent) => `${e.connectionId}|${e.entityType}|${e.externalId}`;
  // Per record: its last event's time (claims from before the batch older than the lifetime
  // before it are dropped), and the version its receipts leave, folded in log order: on a link
  // from before the batch, from all of them; on the link a create's receipt makes, from that
  // receipt on.
  const latest = new Map<string, LogEvent>();
  const versions = new Map<string, { e: LogEvent; all: string | null; linked: string | null | undefined }>();
  const fold = (held: string | null | undefined, next: string | null) =>
    next !== null && mayReplace(next, held ?? null) ? next : (held ?? null);
  for (const e of events) {
    const record = recordOf(e);
    const seen = latest.get(record);
    if (seen === undefined || e.ingestedAt > seen.ingestedAt) latest.set(record, e);
    // A receipt's version, or a refusal's (a `version` event): the same fold.
    if (e.op !== 'receipt' && e.op !== 'version') continue;
    const held = versions.get(record);
    const linked = held?.linked !== undefined ? held.linked : mayLinkRecord(e) ? null : undefined;
    versions.set(record, {
      e,
      all: fold(held?.all, e.providerVersion),
      linked: linked === undefined ? undefined : fold(linked, e.providerVersion),
    });
  }
  // A claim of the batch stays unless a receipt of its write comes after it, or an event of its
  // record a lifetime later: walked from the end, what comes after each event is known.
  const kept: typeof claims = [];
  const receiptAfter = new Set<string>();
  const latestAfter = new Map<string, number>();
  const claimOf = new Map(claims.map((c) => [c.e, c]));
  const receiptOf = new Map(receipts.map((r) => [r.e, r.w]));
  for (const e of [...events].reverse()) {
    const claim = claimOf.get(e);
    if (claim !== undefined) {
      const settledAfter = receiptAfter.has(`${e.connectionId}|${claim.w.idempotencyKey}`);
      const expiredAfter =
        (latestAfter.get(recordOf(e)) ?? -Infinity) - CLAIM_LIFETIME_MS > e.ingestedAt.getTime();
      if (!settledAfter && !expiredAfter) kept.unshift(claim);
    }
    const receipt = receiptOf.get(e);
    if (receipt !== undefined) receiptAfter.add(`${e.connectionId}|${receipt.idempotencyKey}`);
    latestAfter.set(recordOf(e), Math.max(latestAfter.get(recordOf(e)) ?? -Infinity, e.ingestedAt.getTime()));
  }
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const receiptColumns = `connection_id uuid, idempotency_key text, workspace_id uuid, entity_id uuid, entity_type text,
    external_id text, op text, content_hash text, fields jsonb, prior jsonb, heads text[], provider_version text,
    sent_at timestamptz, created_at timestamptz`;
  const { rows: owing } = await tx.query<{ connection_id: string }>(
    `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(${receiptColumns})),
     records AS (SELECT * FROM jsonb_to_recordset($3::jsonb)
                   AS t(connection_id uuid, entity_type text, external_id text, at timestamptz)),
     versions AS (SELECT * FROM jsonb_to_recordset($4::jsonb)
                    AS v(connection_id uuid, entity_type text, external_id text, v text, linked text)),
     claimed AS (
       INSERT INTO write_claim (connection_id, idempotency_key, attempt, workspace_id, entity_id, entity_type,
                                external_id, fields, prior, heads, claimed_at, ingested_at)
       SELECT * FROM jsonb_to_recordset($2::jsonb) AS c(connection_id uuid, idempotency_key text, attempt int,
              workspace_id uuid, entity_id uuid, entity_type text, external_id text, fields jsonb, prior jsonb,
              heads text[], claimed_at timestamptz, ingested_at timestamptz)
       ON CONFLICT DO NOTHING),
     dropped AS (
       DELETE FROM write_claim w
        WHERE EXISTS (SELECT 1 FROM records t
                       WHERE w.connection_id = t.connection_id AND w.entity_type = t.entity_type
                         AND w.external_id = t.external_id
                         AND w.ingested_at < t.at - make_interval(secs => $5::double precision / 1000))
           OR EXISTS (SELECT 1 FROM r WHERE w.connection_id = r.connection_id AND w.idempotency_key = r.idempotency_key)),
     receipted AS (
       INSERT INTO write_receipt (connection_id, idempotency_key, workspace_id, entity_id, entity_type, external_id,
                                  content_hash, fields, prior, heads, provider_version, sent_at, created_at)
       SELECT connection_id, idempotency_key, workspace_id, entity_id, entity_type, external_id, content_hash,
              fields, prior, heads, provider_version, sent_at, created_at
         FROM r WHERE r.op NOT IN ('merge', 'insights')
       ON CONFLICT (connection_id, idempotency_key) DO UPDATE
         SET content_hash = EXCLUDED.content_hash, fields = EXCLUDED.fields, prior = EXCLUDED.prior,
             heads = EXCLUDED.heads, external_id = EXCLUDED.external_id,
             provider_version = EXCLUDED.provider_version, sent_at = EXCLUDED.sent_at,
             created_at = EXCLUDED.created_at, applied_at = NULL),
     -- In a fold from zero the row was owed again and is pending; live, the pusher has it
     -- (sending) or has marked it already. A row the stage set aside stays so. A row locked
     -- is the pusher's, marking it sent now: left to it rather than waited for.
     sent AS (
       UPDATE outbox o SET status = 'sent', sent_at = COALESCE(o.sent_at, r.sent_at)
         FROM r
        WHERE o.id IN (SELECT s.id FROM outbox s JOIN r ON s.connection_id = r.connection_id
                                                       AND s.idempotency_key = r.idempotency_key
                        WHERE s.status IN ('pending', 'sending') FOR UPDATE OF s SKIP LOCKED)
          AND o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key),
     -- An entity erased meanwhile links nothing.
     linked AS (
       INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id, provider_version)
       SELECT r.workspace_id, r.connection_id, r.entity_type, r.external_id, r.entity_id, v.linked
         FROM r LEFT JOIN versions v USING (connection_id, entity_type, external_id)
        WHERE r.op = 'create'
          AND EXISTS (SELECT 1 FROM entity e WHERE e.id = r.entity_id AND e.workspace_id = r.workspace_id)
       ON CONFLICT DO NOTHING),
     versioned AS (
       UPDATE source_link l SET provider_version = v.v
         FROM versions v
        WHERE v.v IS NOT NULL AND l.connection_id = v.connection_id AND l.entity_type = v.entity_type
          AND l.external_id = v.external_id AND ${versionMayReplace('v.v', 'l.provider_version')}),
     released AS (
       UPDATE outbox o SET status = 'pending', claimed_at = NULL
         FROM r
        WHERE r.op = 'create' AND o.connection_id = r.connection_id AND o.status = 'waiting'
          AND (o.entity_id = r.entity_id OR o.fields->>'toId' = r.entity_id::text)
       RETURNING o.connection_id)
     SELECT DISTINCT connection_id::text AS connection_id FROM released`,
    [
      json(
        receipts.map(({ e, w }) => ({
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
        })),
      ),
      json(
        kept.map(({ e, w }) => ({
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
      json(
        [...latest.values()].map((e) => ({
          connection_id: e.connectionId,
          entity_type: e.entityType,
          external_id: e.externalId,
          at: e.ingestedAt.toISOString(),
        })),
      ),
      json(
        [...versions.values()].map(({ e, all, linked }) => ({
          connection_id: e.connectionId,
          entity_type: e.entityType,
          external_id: e.externalId,
          v: all,
          linked: linked ?? null,
        })),
      ),
      CLAIM_LIFETIME_MS,
    ],
  );
  return owing.map((r) => r.connection_id);
}
