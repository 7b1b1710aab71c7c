import { randomBytes, randomUUID } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../../test/support/env';
import type { ConnectionContext } from '../../contract/connector';
import { WebhookReceiver } from '../../contract/testing/webhook-receiver';
import { hubspotBudgetLimits, RedisRateBudget } from '../../shared/rate-budget';
import { deleteKeys } from '../../shared/testing/redis-keys';
import { StaticTokenSource } from '../../shared/token-source';

export const TEST_APP_ID = 5001;
const LIMITS = { per10s: 190, searchPerSecond: 5, windowMs: 10_000 };

/**
 * For a describe block of HubSpot connector tests: the emulators, Redis and a webhook
 * receiver for the block (started and stopped by its hooks), the emulator's control API, and
 * fresh portals with our app installed and a connection context for each. Portal ids start
 * at a random point above `firstPortal`, so files running at once never share one.
 */
export function hubspotTestPortals(name: string, firstPortal: number) {
  const prefix = `${TEST_REDIS_PREFIX}:${name}-${randomBytes(4).toString('hex')}`;
  let emulators: RunningEmulators;
  let redis: Redis;
  let receiver: WebhookReceiver;
  let nextPortal = firstPortal + Math.floor(Math.random() * 1_000);

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    redis = new Redis(TEST_REDIS_URL);
    receiver = await WebhookReceiver.start('/hubspot/webhooks');
  });
  afterAll(async () => {
    await deleteKeys(redis, `${prefix}:*`);
    redis.disconnect();
    await receiver.close();
    await emulators.close();
  });

  const control = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${emulators.hubspotUrl}${path}`, {
      method,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };

  /** A new portal (webhooks to the receiver when asked), its connection context and request log. */
  async function portal(webhooks = false) {
    const portalId = nextPortal++;
    const grant = await control<{ accessToken: string }>('POST', '/_emulator/hubspot/portals', {
      portalId,
      appId: TEST_APP_ID,
      clientSecret: 'shh',
      limits: LIMITS,
      ...(webhooks ? { webhookUrl: receiver.url, webhookTiming: { batchDelayMs: 20 } } : {}),
    });
    const connectionId = randomUUID();
    const ctx: ConnectionContext = {
      connectionId,
      workspaceId: randomUUID(),
      externalAccountId: String(portalId),
      tokens: new StaticTokenSource(grant.accessToken),
      budget: new RedisRateBudget(redis, connectionId, hubspotBudgetLimits(LIMITS), prefix),
      endpoints: {
        hubspotBaseUrl: emulators.hubspotUrl,
        googleRootUrl: '',
        googleTokenUrl: '',
        microsoftGraphUrl: emulators.microsoftUrl,
      },
      appId: String(TEST_APP_ID),
    };
    const requests = () =>
      control<{ method: string; path: string; status: number }[]>(
        'GET',
        `/_emulator/requests?service=hubspot&account=${portalId}`,
      );
    return { portalId, ctx, requests, base: `/_emulator/hubspot/portals/${portalId}` };
  }

  return { control, portal, receiver: () => receiver };
}
