import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { EntityType, SourceChangeInput } from '@syncline/core';
import { inTransaction } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import type { ChangeLog, LogEvent } from '@syncline/log';
import type { Pool } from 'pg';
import type { OutboxRow } from '../outbox/outbox-row';
import { type StageOwed, SyncStage, type SyncStageOptions } from '../sync-stage';
import { foldWriteEvents, writeClaimChange, writeReceiptChange } from '../write-events';

/** A log event as a test writes it: the log's own columns are filled in by `handle`. */
export type StageEvent = Omit<LogEvent, 'partition' | 'offset' | 'ingestedAt' | 'providerVersion'> & {
  providerVersion?: string | null;
};

/**
 * The sync stage in-process against a test database: each `handle` call is one batch, in one
 * transaction, as the log's consumer hands it over (offsets rise across calls).
 */
export function syncStage(
  pool: Pool,
  {
    clock = () => new Date(),
    ...options
  }: Pick<SyncStageOptions, 'providerMerges' | 'insights'> & {
    /** When each batch's events came (their `ingestedAt`): the log's time. */
    clock?: () => Date;
  } = {},
): { handle: (...batch: StageEvent[]) => Promise<StageOwed> } {
  const engine = new MergeEngine(new PgMergeStore(pool));
  const stage = new SyncStage({
    identity: new IdentityService(),
    engine,
    connectionsTtlMs: 0,
    ...options,
  });
  let offset = 0;
  const handle = (...batch: StageEvent[]) =>
    inTransaction(pool, (client) =>
      stage.handle(
        client,
        batch.map((event) => ({
          ...event,
          partition: 0,
          offset: ++offset,
          ingestedAt: clock(),
          providerVersion: event.providerVersion ?? null,
        })),
      ),
    );
  return { handle };
}

/** A workspace with live connections of the given providers, none reconciled unless asked. */
export async function seedConnections<K extends string>(
  pool: Pool,
  providers: Record<K, string>,
  options: { reconciled?: boolean } = {},
): Promise<{ workspaceId: string } & Record<K, string>> {
  const workspaceId = randomUUID();
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `ws-${workspaceId}`]);
  const ids = {} as Record<K, string>;
  for (const [key, provider] of Object.entries(providers) as [K, string][]) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, reconciled_at)
       VALUES ($1, $2, $3::provider, $4, 'live', CASE WHEN $5 THEN now() END)`,
      [id, workspaceId, provider, `acct-${id}`, options.reconciled === true],
    );
    ids[key] = id;
  }
  return { workspaceId, ...ids };
}

/** A HubSpot contact as its pull reports it at `at`. */
export const contactEvent = (
  workspaceId: string,
  connectionId: string,
  externalId: string,
  at: Date,
  fields: Record<string, unknown>,
): StageEvent => ({
  workspaceId,
  connectionId,
  entityType: 'person',
  externalId,
  op: 'upsert',
  eventKey: `contacts:${externalId}:${at.getTime()}`,
  fields,
  fieldTimes: {},
  eventTime: at,
  origin: null,
});

/** A change as the log hands it to a consumer: on partition 0, at `offset`, come at `ingestedAt` (now). */
export const logEventOf = (
  c: SourceChangeInput,
  { offset = 0, ingestedAt = new Date() }: { offset?: number; ingestedAt?: Date } = {},
): LogEvent => ({
  partition: 0,
  offset,
  workspaceId: c.workspaceId,
  connectionId: c.connectionId,
  eventKey: c.eventKey,
  entityType: c.entityType,
  externalId: c.externalId,
  op: c.op,
  fields: c.fields ?? {},
  fieldTimes: {},
  eventTime: new Date(c.eventTime),
  ingestedAt,
  providerVersion: c.providerVersion ?? null,
  origin: null,
});

/** Where a played push puts its claims and receipts: on a log, or folded at once. */
type WritesTo = { log?: Pick<ChangeLog, 'append'> };

/**
 * The push stage's events: appended to `log` when given (the test's consumer folds them, as
 * PushService's are), else folded as the sync stage folds them off the log (now, at offset 0).
 */
async function foldWrites(pool: Pool, changes: SourceChangeInput[], { log }: WritesTo = {}): Promise<void> {
  if (changes.length === 0) return;
  if (log !== undefined) {
    const appended = await log.append(changes);
    if (!appended.ok) throw new Error(appended.error.message);
    return;
  }
  const events = changes.map((c) => logEventOf(c));
  await inTransaction(pool, (client) => foldWriteEvents(client, events));
}

/** An outbox row as a played pusher takes it. */
type PushedRow = Pick<
  OutboxRow,
  'workspace_id' | 'entity_id' | 'fields' | 'prior' | 'heads' | 'idempotency_key'
>;

/** The record a played write goes to. */
interface WrittenRecord {
  connectionId: string;
  entityType: EntityType;
  externalId: string;
}

/** A played pusher's claim of a row, as PushService appends it before sending. */
export const claimOf = (row: PushedRow & { attempts: number }, record: WrittenRecord, claimedAt: Date) =>
  writeClaimChange(
    { workspaceId: row.workspace_id, ...record },
    {
      idempotencyKey: row.idempotency_key,
      entityId: row.entity_id,
      attempt: row.attempts,
      fields: row.fields,
      prior: row.prior,
      heads: row.heads,
      claimedAt: claimedAt.toISOString(),
    },
  );

/** A played pusher's receipt of a row the provider took (no provider version). */
export const receiptOf = (
  row: PushedRow,
  record: WrittenRecord,
  sentAt: Date,
  op: 'create' | 'update' = 'update',
) =>
  writeReceiptChange(
    { workspaceId: row.workspace_id, ...record },
    {
      idempotencyKey: row.idempotency_key,
      entityId: row.entity_id,
      op,
      fields: row.fields,
      prior: row.prior,
      heads: row.heads,
      contentHash: 'h',
      sentAt: sentAt.toISOString(),
    },
    null,
  );

/**
 * Plays a pusher's claim: the connection's pending rows are taken (`sending`) at `claimedAt`,
 * and the claims of its updates are folded as their events on the log would be.
 */
export async function claimPush(
  pool: Pool,
  connectionId: string,
  claimedAt: Date,
  options: WritesTo = {},
): Promise<number> {
  const { rows } = await pool.query<OutboxRow & { attempts: number }>(
    `UPDATE outbox SET status = 'sending', claimed_at = $2, attempts = attempts + 1
      WHERE connection_id = $1 AND status = 'pending'
     RETURNING workspace_id, entity_id, entity_type, op, external_id, fields, prior, heads, idempotency_key, attempts`,
    [connectionId, claimedAt],
  );
  await foldWrites(
    pool,
    rows.flatMap((row) =>
      row.op === 'update' && row.external_id !== null
        ? [
            claimOf(
              row,
              { connectionId, entityType: row.entity_type, externalId: row.external_id },
              claimedAt,
            ),
          ]
        : [],
    ),
    options,
  );
  return rows.length;
}

/**
 * Plays the push stage for one connection: its pending outbox rows are "sent" and their
 * receipts folded as PushService's receipt events would be (a provider merge leaves none).
 * With `linkCreates`, a created record is linked by its receipt under a made-up id, and
 * deletes leave no receipt, as PushService does. With `from: 'sending'`, it finishes the rows
 * `claimPush` took.
 */
export async function playPush(
  pool: Pool,
  connectionId: string,
  sentAt: Date,
  options: { linkCreates?: boolean; from?: 'pending' | 'sending' } & WritesTo = {},
): Promise<{ op: string; entityId: string; fields: Record<string, unknown> }[]> {
  const { rows } = await pool.query<OutboxRow>(
    `UPDATE outbox SET status = 'sent' WHERE connection_id = $1 AND status = $2
     RETURNING workspace_id, entity_id, entity_type, op, external_id, fields, prior, heads, idempotency_key`,
    [connectionId, options.from ?? 'pending'],
  );
  const receipts = rows.flatMap((row) => {
    if (row.op === 'merge' || (options.linkCreates && row.op === 'delete')) return [];
    const externalId = options.linkCreates
      ? (row.external_id ?? `made-for-${row.entity_id}`)
      : row.external_id;
    if (externalId === null) return [];
    return [
      receiptOf(
        row,
        { connectionId, entityType: 'person', externalId },
        sentAt,
        // Without linkCreates a create's receipt links nothing (it names no record).
        row.op === 'create' && options.linkCreates ? 'create' : 'update',
      ),
    ];
  });
  await foldWrites(pool, receipts, options);
  return rows.map((r) => ({ op: r.op, entityId: r.entity_id, fields: r.fields }));
}
