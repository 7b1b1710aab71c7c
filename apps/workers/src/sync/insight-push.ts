import { type ConnectorError, contentHash, type InsightValues } from '@syncline/connectors';
import type { Logger, SourceChangeInput } from '@syncline/core';
import { writeReceiptChange } from '@syncline/sync-stage';
import type { Pool } from 'pg';
import type { ConnectionHandle } from '../connections/connection-runtime';
import type { ClaimedRow } from './outbox-claim';

/** What sending insight rows needs of the push stage. */
export interface InsightPushDeps {
  pool: Pool;
  logger: Logger;
  /** Appends the receipts to the log (PushService.appendNow); throws what the job retries when it cannot. */
  append(changes: readonly SourceChangeInput[]): Promise<void>;
  /** Throws what the job retries (rate limited, transient, credentials refused); returns otherwise. */
  refused(handle: ConnectionHandle, error: ConnectorError): Promise<void>;
}

export const isInsightWrite = (row: ClaimedRow): boolean => row.op === 'insights';

/**
 * Writes the insight properties of claimed `insights` rows (entity-insights.ts) to their CRM:
 * the properties are made first (once per connection and process; idempotent), then written in
 * batches. Each write's receipt goes on the log before its row is marked sent: the record's
 * version moves with our write, and the next write of its fields is conditional on that version.
 * A record gone from the CRM (deleted, merged away) sets its row aside; a refusal of the write
 * itself fails the rows with its message (the next change of the record's insights queues
 * them again).
 */
export class InsightPush {
  /** Connections whose properties this process made (or found). */
  private readonly ensured = new Set<string>();

  constructor(private readonly deps: InsightPushDeps) {}

  /** Sends the rows; returns how many went. Rows not settled when it throws are the caller's to release. */
  async send(handle: ConnectionHandle, rows: readonly ClaimedRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const { connector } = handle;
    const ids = rows.map((r) => r.id);
    if (connector.pushInsights === undefined || connector.ensureInsightProperties === undefined) {
      await this.settle(ids, 'superseded', `${handle.provider} holds no insight properties`);
      return 0;
    }
    if (!this.ensured.has(handle.id)) {
      const made = await connector.ensureInsightProperties(handle.ctx);
      if (!made.ok) return this.refuse(handle, ids, made.error);
      if (made.value.created.length > 0)
        this.deps.logger.info(
          { connectionId: handle.id, created: made.value.created.length },
          'insight properties created',
        );
      this.ensured.add(handle.id);
    }
    const bare = rows.filter((r) => r.external_id === null);
    if (bare.length > 0)
      await this.settle(
        bare.map((r) => r.id),
        'superseded',
        'no record to write to',
      );
    const writable = rows.filter((r) => r.external_id !== null);
    if (writable.length === 0) return 0;
    const sentAt = new Date();
    const result = await connector.pushInsights(
      handle.ctx,
      writable.map((r) => ({
        entityType: r.entity_type,
        externalId: r.external_id!,
        idempotencyKey: r.idempotency_key,
        values: r.fields as unknown as InsightValues,
      })),
    );
    if (!result.ok)
      return this.refuse(
        handle,
        writable.map((r) => r.id),
        result.error,
      );
    const outcome = new Map(result.value.map((w) => [w.idempotencyKey, w]));
    const written = writable.filter((r) => outcome.get(r.idempotency_key)?.outcome === 'written');
    const gone = writable.filter((r) => outcome.get(r.idempotency_key)?.outcome !== 'written');
    await this.deps.append(
      written.map((r) =>
        writeReceiptChange(
          {
            workspaceId: r.workspace_id,
            connectionId: handle.id,
            entityType: r.entity_type,
            externalId: r.external_id!,
          },
          {
            idempotencyKey: r.idempotency_key,
            entityId: r.entity_id,
            op: 'insights',
            fields: {},
            prior: {},
            heads: [],
            contentHash: contentHash({}),
            sentAt: sentAt.toISOString(),
          },
          outcome.get(r.idempotency_key)?.providerVersion ?? null,
        ),
      ),
    );
    await this.deps.pool.query(
      `UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = ANY($1::bigint[])`,
      [written.map((r) => r.id)],
    );
    if (gone.length > 0)
      await this.settle(
        gone.map((r) => r.id),
        'superseded',
        'the record is gone from the CRM',
      );
    return written.length;
  }

  /** A retryable refusal throws (PushService.refused); any other fails the rows with its message. */
  private async refuse(handle: ConnectionHandle, ids: readonly string[], error: ConnectorError): Promise<0> {
    await this.deps.refused(handle, error);
    this.deps.logger.warn(
      { connectionId: handle.id, code: error.code, err: error.message },
      'insight properties refused by the provider',
    );
    await this.settle(ids, 'failed', `${error.code}: ${error.message}`);
    return 0;
  }

  private async settle(
    ids: readonly string[],
    status: 'failed' | 'superseded',
    reason: string,
  ): Promise<void> {
    await this.deps.pool.query(
      'UPDATE outbox SET status = $2, last_error = $3 WHERE id = ANY($1::bigint[])',
      [ids, status, reason.slice(0, 2_000)],
    );
  }
}
