import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ConnectionContext } from '../../contract/connector';
import { oauth2Refresher } from '../../shared/oauth-refresh';
import { type BudgetLimits, RedisRateBudget } from '../../shared/rate-budget';
import { deleteKeys } from '../../shared/testing/redis-keys';
import { MemoryCredentialStore, OAuthTokenSource } from '../../shared/token-source';
import { GoogleTestKit, type GoogleUser } from './google-test-kit';
import { WebhookReceiver } from './webhook-receiver';

export interface GoogleHarnessOptions {
  redisUrl: string;
  /** Must start with `syncline-test:` in tests. */
  redisPrefix: string;
}

/** One connection of a contract account: its ids, contexts, and the cleanup of its budget keys. */
export interface GoogleConnection {
  connectionId: string;
  workspaceId: string;
  /** A fresh context ("a new process"): new token cache, the same Redis budget. */
  context(): ConnectionContext;
  close(): Promise<void>;
}

/**
 * What the Google contract harnesses share: the emulators, a webhook receiver, a Redis
 * client for the per-connection budgets, and connections whose token source refreshes
 * against the emulator's OAuth endpoint through the shared `oauth2Refresher`.
 */
export class GoogleContractSupport {
  private constructor(
    readonly kit: GoogleTestKit,
    readonly receiver: WebhookReceiver,
    private readonly redis: Redis,
    private readonly options: GoogleHarnessOptions,
  ) {}

  static async start(options: GoogleHarnessOptions): Promise<GoogleContractSupport> {
    if (!options.redisPrefix.startsWith('syncline-test:'))
      throw new Error(`test Redis keys must start with syncline-test: (${options.redisPrefix})`);
    const kit = await GoogleTestKit.start();
    const receiver = await WebhookReceiver.start();
    const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 2 });
    return new GoogleContractSupport(kit, receiver, redis, options);
  }

  connection(user: GoogleUser, label: string, limits: BudgetLimits): GoogleConnection {
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
      tokenUrl: `${this.kit.url}/token`,
      clientId: user.clientId,
      clientSecret: user.clientSecret,
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
