import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ConnectionContext } from '../../contract/connector';
import { oauth2Refresher } from '../../shared/oauth-refresh';
import { microsoftBudgetLimits, RedisRateBudget } from '../../shared/rate-budget';
import { deleteKeys } from '../../shared/testing/redis-keys';
import { MemoryCredentialStore, OAuthTokenSource } from '../../shared/token-source';
import { GraphNotificationReceiver } from './graph-notification-receiver';
import { MicrosoftTestKit, type MicrosoftUser } from './microsoft-test-kit';

export interface MicrosoftHarnessOptions {
  redisUrl: string;
  /** Must start with `syncline-test:` in tests. */
  redisPrefix: string;
}

/** One connection of a contract account: its ids, contexts, and the cleanup of its budget keys. */
export interface MicrosoftConnection {
  connectionId: string;
  workspaceId: string;
  /** A fresh context ("a new process"): new token cache, the same Redis budget. */
  context(): ConnectionContext;
  close(): Promise<void>;
}

/**
 * What the Microsoft contract harnesses share: the emulators, a notification receiver, a
 * Redis client for the budgets, and connections whose token source refreshes against the
 * emulated identity platform through the shared `oauth2Refresher` (Microsoft hands out a new
 * refresh token on every refresh; the store keeps the latest).
 */
export class MicrosoftContractSupport {
  private constructor(
    readonly kit: MicrosoftTestKit,
    readonly receiver: GraphNotificationReceiver,
    private readonly redis: Redis,
    private readonly options: MicrosoftHarnessOptions,
  ) {}

  static async start(options: MicrosoftHarnessOptions): Promise<MicrosoftContractSupport> {
    if (!options.redisPrefix.startsWith('syncline-test:'))
      throw new Error(`test Redis keys must start with syncline-test: (${options.redisPrefix})`);
    const kit = await MicrosoftTestKit.start();
    const receiver = await GraphNotificationReceiver.start();
    const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 2 });
    return new MicrosoftContractSupport(kit, receiver, redis, options);
  }

  /** A connection to `user`'s mailbox, with the per-mailbox budget the workers give it. */
  connection(user: MicrosoftUser, label: string, limits = microsoftBudgetLimits()): MicrosoftConnection {
    const connectionId = randomUUID();
    const workspaceId = randomUUID();
    const store = new MemoryCredentialStore({
      [connectionId]: {
        accessToken: user.accessToken,
        refreshToken: user.refreshToken,
        expiresAt: new Date(Date.now() + 3_000_000).toISOString(),
      },
    });
    const refresh = oauth2Refresher({
      tokenUrl: this.kit.tokenUrl,
      clientId: this.kit.app.clientId,
      clientSecret: this.kit.app.clientSecret,
    });
    const budgetPrefix = `${this.options.redisPrefix}:${label}-${connectionId.slice(0, 8)}`;
    const redis = this.redis;
    return {
      connectionId,
      workspaceId,
      context: () => ({
        ...this.kit.context(
          user,
          new RedisRateBudget(redis, connectionId, limits, budgetPrefix),
          new OAuthTokenSource({ connectionId, store, refresh }),
        ),
        connectionId,
        workspaceId,
      }),
      close: () => deleteKeys(redis, `${budgetPrefix}:*`),
    };
  }

  async stop(): Promise<void> {
    await this.receiver.close();
    await this.kit.close();
    await deleteKeys(this.redis, `${this.options.redisPrefix}:*`);
    this.redis.disconnect();
  }
}
