import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { inTransaction } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import type { LogEvent } from '@syncline/log';
import type { Pool } from 'pg';
import { type StageOwed, SyncStage, type SyncStageOptions } from '../sync-stage';

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
  options: Pick<SyncStageOptions, 'providerMerges'> = {},
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
          ingestedAt: new Date(),
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

/** Plays a pusher's claim: the connection's pending rows are taken (`sending`) at `claimedAt`. */
export async function claimPush(pool: Pool, connectionId: string, claimedAt: Date): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE outbox SET status = 'sending', claimed_at = $2, attempts = attempts + 1
      WHERE connection_id = $1 AND status = 'pending'`,
    [connectionId, claimedAt],
  );
  return rowCount ?? 0;
}

/**
 * Plays the push stage for one connection: its pending outbox rows are "sent" and leave write
 * receipts, as PushService's would (a provider merge leaves none). With `linkCreates`, a
 * created record is also linked at once under a made-up id, and deletes leave no receipt, as
 * PushService does. With `from: 'sending'`, it finishes the rows `claimPush` took.
 */
export async function playPush(
  pool: Pool,
  connectionId: string,
  sentAt: Date,
  options: { linkCreates?: boolean; from?: 'pending' | 'sending' } = {},
): Promise<{ op: string; entityId: string; fields: Record<string, unknown> }[]> {
  const { rows } = await pool.query<{
    workspace_id: string;
    entity_id: string;
    op: string;
    external_id: string | null;
    fields: Record<string, unknown>;
    prior: Record<string, unknown>;
    heads: string[];
    idempotency_key: string;
  }>(
    `UPDATE outbox SET status = 'sent' WHERE connection_id = $1 AND status = $2
     RETURNING workspace_id, entity_id, op, external_id, fields, prior, heads, idempotency_key`,
    [connectionId, options.from ?? 'pending'],
  );
  for (const row of rows) {
    if (row.op === 'merge' || (options.linkCreates && row.op === 'delete')) continue;
    const externalId = options.linkCreates
      ? (row.external_id ?? `made-for-${row.entity_id}`)
      : row.external_id;
    await pool.query(
      `INSERT INTO write_receipt (connection_id, idempotency_key, workspace_id, entity_id, entity_type,
                                  external_id, content_hash, fields, prior, heads, sent_at)
       VALUES ($1, $2, $3, $4, 'person', $5, 'h', $6, $7, $8, $9)`,
      [
        connectionId,
        row.idempotency_key,
        row.workspace_id,
        row.entity_id,
        externalId,
        row.fields,
        row.prior,
        row.heads,
        sentAt,
      ],
    );
    if (options.linkCreates)
      await pool.query(
        `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
         VALUES ($1, $2, 'person', $3, $4) ON CONFLICT DO NOTHING`,
        [row.workspace_id, connectionId, externalId, row.entity_id],
      );
  }
  return rows.map((r) => ({ op: r.op, entityId: r.entity_id, fields: r.fields }));
}
