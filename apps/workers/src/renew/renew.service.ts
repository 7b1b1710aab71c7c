import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Subscription } from '@syncline/connectors';
import type { Logger, ProviderKey } from '@syncline/core';
import type { Pool, PoolClient } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { type ConnectionHandle, ConnectionRuntime } from '../connections/connection-runtime';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { WorkerMetrics } from '../metrics/worker-metrics';

/** Providers whose push notifications expire and must be renewed. */
export const RENEWED_PROVIDERS: readonly ProviderKey[] = [
  'google-calendar',
  'gmail',
  'microsoft-calendar',
  'microsoft-mail',
  'microsoft-todo',
];
/** A subscription expiring sooner than this is replaced. */
export const RENEW_AHEAD_MS = 3_600_000;

/** Same convention as connection credentials: binds a sealed channel token to its row. */
export const pushSubscriptionAad = (subscriptionId: string): string => `push-subscription:${subscriptionId}`;

export interface RenewOutcome {
  checked: number;
  renewed: number;
  failed: number;
}

interface SubscriptionRow {
  id: string;
  resource_id: string | null;
  expires_at: Date;
}

/** Serialises the subscribing of one connection across processes (the renewal job and pulls). */
const SUBSCRIBE_LOCK_CLASS = 0x5e51;

/** What `ensure` did for one connection. */
export type EnsureOutcome =
  /** It has a subscription lasting past the renewal horizon, or is not one to watch now. */
  | 'current'
  | 'subscribed'
  /** The provider refused (logged, and the connection's error recorded); a later call retries. */
  | 'failed'
  /** Another process is subscribing it at this moment. */
  | 'busy';

/**
 * Keeps a push subscription (Calendar watch channel, Gmail watch, Graph subscription) alive for every live or
 * backfilling Google or Microsoft connection: subscribes when there is none or it expires within an
 * hour, stores the new channel with its token sealed, then stops and deletes the old one.
 * `ensure` does it for one connection: the renewal job (every 10 minutes) calls it for every
 * connection due, and a pull calls it as a connection starts, resumes or goes live, so push
 * works from the first change on. A failure is logged and left to the next call.
 */
@Injectable()
export class RenewService {
  private readonly logger: Logger;

  constructor(
    @Inject(ConnectionRuntime) private readonly runtime: ConnectionRuntime,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: RenewService.name });
  }

  async renewAll(now: Date = new Date()): Promise<RenewOutcome> {
    const ids = await this.due(now);
    const outcome: RenewOutcome = { checked: ids.length, renewed: 0, failed: 0 };
    for (const id of ids) {
      const done = await this.ensure(id, now);
      if (done === 'subscribed') outcome.renewed++;
      else if (done === 'failed') outcome.failed++;
    }
    if (outcome.checked > 0) this.logger.info(outcome, 'push subscriptions renewed');
    return outcome;
  }

  /**
   * Subscribes `connectionId` if it is a watched provider, live or backfilling, and has no
   * subscription lasting past the renewal horizon. Never throws: a failure is logged and
   * answered `failed`, for the next call to retry.
   */
  async ensure(connectionId: string, now: Date = new Date()): Promise<EnsureOutcome> {
    let lock: PoolClient | undefined;
    let locked = false;
    try {
      // Most calls find it subscribed: one read, no lock.
      if ((await this.due(now, connectionId)).length === 0) return 'current';
      lock = await this.pool.connect();
      const { rows } = await lock.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok',
        [SUBSCRIBE_LOCK_CLASS, connectionId],
      );
      locked = rows[0]?.ok === true;
      if (!locked) return 'busy';
      // Under the lock: a subscription another process made meanwhile is seen here.
      if ((await this.due(now, connectionId)).length === 0) return 'current';
      return (await this.renew(connectionId)) ? 'subscribed' : 'failed';
    } catch (error) {
      this.logger.error({ err: error, connectionId }, 'push subscription failed; next run retries');
      return 'failed';
    } finally {
      // A client whose unlock failed is destroyed, not pooled: its session would keep the lock.
      let broken: Error | undefined;
      if (locked)
        await lock
          ?.query('SELECT pg_advisory_unlock($1, hashtext($2))', [SUBSCRIBE_LOCK_CLASS, connectionId])
          .catch((error: unknown) => {
            broken = error instanceof Error ? error : new Error(String(error));
          });
      lock?.release(broken);
    }
  }

  /** Watched connections, live or backfilling, with no subscription lasting past the horizon (or only `connectionId`). */
  private async due(now: Date, connectionId?: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT c.id FROM connection c
        WHERE c.provider::text = ANY($1::text[]) AND c.status IN ('backfilling', 'live')
          AND ($3::uuid IS NULL OR c.id = $3::uuid)
          AND NOT EXISTS (SELECT 1 FROM push_subscription s
                           WHERE s.connection_id = c.id AND s.expires_at > $2::timestamptz)
        ORDER BY c.id`,
      [RENEWED_PROVIDERS, new Date(now.getTime() + RENEW_AHEAD_MS), connectionId ?? null],
    );
    return rows.map((r) => r.id);
  }

  /** Returns false when the provider refused (logged); throws on a bug or an unreachable database. */
  private async renew(connectionId: string): Promise<boolean> {
    const handle = await this.runtime.open(connectionId);
    if (handle === undefined || !handle.hasCredentials) return false;
    const { subscribe } = handle.connector;
    if (subscribe === undefined) return false;
    const keyring = this.runtime.requireKeyring(connectionId);
    const callbackUrl = `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/webhooks/${handle.provider}`;
    // The channel token Google echoes on every notification (Gmail's push uses GMAIL_PUSH_TOKEN
    // instead; the row still gets one so every subscription row has the same shape).
    const token = randomBytes(32).toString('base64url');
    const old = await this.pool.query<SubscriptionRow>(
      'SELECT id, resource_id, expires_at FROM push_subscription WHERE connection_id = $1',
      [connectionId],
    );
    const created = await subscribe.call(handle.connector, handle.ctx, callbackUrl, token);
    if (!created.ok) {
      this.metrics.connectorErrors.inc({ provider: handle.provider, code: created.error.code });
      await this.runtime.recordError(connectionId, created.error.code);
      if (created.error.code === 'AuthRevoked') {
        await this.runtime.setStatus(connectionId, 'needs_reauth', created.error.message);
      }
      this.logger.warn(
        { connectionId, provider: handle.provider, code: created.error.code, error: created.error.message },
        'provider refused the push subscription; next run retries',
      );
      return false;
    }
    const subscription = created.value;
    const sealed = keyring.seal(token, pushSubscriptionAad(subscription.id));
    await this.pool.query(
      `INSERT INTO push_subscription (id, connection_id, workspace_id, resource_id, token_ciphertext, token_key_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET resource_id = EXCLUDED.resource_id, token_ciphertext = EXCLUDED.token_ciphertext,
              token_key_id = EXCLUDED.token_key_id, expires_at = EXCLUDED.expires_at`,
      [
        subscription.id,
        connectionId,
        handle.workspaceId,
        subscription.resourceId ?? null,
        sealed.ciphertext,
        sealed.keyId,
        subscription.expiresAt,
      ],
    );
    this.logger.info(
      {
        connectionId,
        provider: handle.provider,
        subscriptionId: subscription.id,
        expiresAt: subscription.expiresAt,
      },
      'push subscription created',
    );
    // Gmail's watch keeps its id across renewals: that row was just updated, not replaced.
    for (const replaced of old.rows.filter((r) => r.id !== subscription.id)) {
      await this.retire(handle, replaced);
    }
    return true;
  }

  /** Stops an old channel (best effort: it expires by itself anyway) and deletes its row. */
  private async retire(handle: ConnectionHandle, row: SubscriptionRow): Promise<void> {
    const old: Subscription = {
      id: row.id,
      expiresAt: row.expires_at,
      ...(row.resource_id === null ? {} : { resourceId: row.resource_id }),
    };
    const stopped = await handle.connector.unsubscribe?.call(handle.connector, handle.ctx, old);
    if (stopped !== undefined && !stopped.ok) {
      this.logger.warn(
        {
          connectionId: handle.id,
          subscriptionId: row.id,
          code: stopped.error.code,
          error: stopped.error.message,
        },
        'could not stop the replaced channel; it expires by itself',
      );
    }
    await this.pool.query('DELETE FROM push_subscription WHERE id = $1', [row.id]);
  }
}
