import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { Redis } from 'ioredis';
import type { ConnectionContext, WebhookRequest } from '../contract/connector';
import type {
  ContractHarness,
  HarnessAccount,
  LoggedRequest,
  WebhookCase,
} from '../contract/testing/harness';
import { WebhookReceiver } from '../contract/testing/webhook-receiver';
import { oauth2Refresher } from '../shared/oauth-refresh';
import { hubspotBudgetLimits, RedisRateBudget } from '../shared/rate-budget';
import { deleteKeys } from '../shared/testing/redis-keys';
import { MemoryCredentialStore, OAuthTokenSource } from '../shared/token-source';
import { hubspotConnector } from './hubspot.connector';

const APP_ID = 5001;
/** The emulator's limits for every contract portal, and the budget built from them. */
export const CONTRACT_LIMITS = { per10s: 190, searchPerSecond: 5, windowMs: 10_000 };

export interface HubspotHarnessOptions {
  redisUrl: string;
  /** Must start with `syncline-test:` in tests. */
  redisPrefix: string;
}

/** Runs the contract suite for HubSpot against the HubSpot emulator with the official SDK. */
export class HubspotContractHarness implements ContractHarness {
  readonly name = 'hubspot';
  readonly connector = hubspotConnector;
  readonly entityType = 'person' as const;
  readonly backfillSize = 2_500;
  private emulators: RunningEmulators | undefined;
  private redis: Redis | undefined;
  private nextPortal = 7_000 + Math.floor(Math.random() * 1_000) * 100;

  constructor(private readonly options: HubspotHarnessOptions) {}

  async start(): Promise<void> {
    this.emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    this.redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: 2 });
  }

  async stop(): Promise<void> {
    if (this.redis) {
      await deleteKeys(this.redis, `${this.options.redisPrefix}:*`);
      this.redis.disconnect();
    }
    await this.emulators?.close();
  }

  async account(label: string): Promise<HarnessAccount> {
    const emulators = this.emulators!;
    const redis = this.redis!;
    const base = emulators.hubspotUrl;
    const portalId = this.nextPortal++;
    const clientSecret = `secret-${randomBytes(8).toString('hex')}`;
    const receiver = await WebhookReceiver.start('/hubspot/webhooks');
    const created = await control<{ accessToken: string; refreshToken: string; clientId: string }>(
      base,
      'POST',
      '/_emulator/hubspot/portals',
      {
        portalId,
        appId: APP_ID,
        clientSecret,
        webhookUrl: receiver.url,
        limits: CONTRACT_LIMITS,
        webhookTiming: { batchDelayMs: 20 },
      },
    );
    const connectionId = randomUUID();
    const workspaceId = randomUUID();
    const store = new MemoryCredentialStore({
      [connectionId]: {
        accessToken: created.accessToken,
        refreshToken: created.refreshToken,
        expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
      },
    });
    const refresh = oauth2Refresher({
      tokenUrl: `${base}/oauth/v1/token`,
      clientId: created.clientId,
      clientSecret,
    });
    const budgetPrefix = `${this.options.redisPrefix}:${label}`;
    const portal = `/_emulator/hubspot/portals/${portalId}`;
    const live = async () =>
      (await control<{ results: { id: string }[] }>(base, 'GET', `${portal}/objects/contacts`)).results;

    return {
      context: (): ConnectionContext => ({
        connectionId,
        workspaceId,
        externalAccountId: String(portalId),
        tokens: new OAuthTokenSource({ connectionId, store, refresh }),
        budget: new RedisRateBudget(redis, connectionId, hubspotBudgetLimits(CONTRACT_LIMITS), budgetPrefix),
        endpoints: {
          hubspotBaseUrl: base,
          googleRootUrl: `${emulators.googleUrl}/`,
          googleTokenUrl: `${emulators.googleUrl}/token`,
          microsoftGraphUrl: emulators.microsoftUrl,
        },
        appId: String(APP_ID),
      }),
      webhookContext: () => ({ connectionId, workspaceId, appId: String(APP_ID) }),
      seed: async (count) => {
        const before = new Set((await live()).map((r) => r.id));
        await control(base, 'POST', `${portal}/seed/contacts`, { count });
        return (await live()).map((r) => r.id).filter((id) => !before.has(id));
      },
      changeRemote: async (id) => {
        await control(base, 'PATCH', `${portal}/ui/contacts/${id}`, {
          properties: { firstname: `Changed ${randomBytes(3).toString('hex')}` },
        });
      },
      deleteRemote: async (id) => {
        await control(base, 'DELETE', `${portal}/ui/contacts/${id}`);
      },
      remoteRecord: async (id) => (await live()).find((r) => r.id === id),
      remoteCount: async () => (await live()).length,
      sampleFields: (n) => ({
        email: `created-${n}@p${portalId}.example.test`,
        firstName: 'Created',
        lastName: `Number ${n}`,
      }),
      invalidateCursor: async (current) => ({
        kind: 'local',
        cursor: { ...current, v: 0 },
        reason:
          'HubSpot has no cursor invalidation; a cursor of an older connector version takes the same reset path',
      }),
      webhook: async (): Promise<WebhookCase> => {
        const record = await control<{ id: string }>(base, 'POST', `${portal}/ui/contacts`, {
          properties: { email: `hook-${randomBytes(3).toString('hex')}@example.test`, firstname: 'Hook' },
        });
        const valid = await receiver.waitFor((r) => r.rawBody.includes(`"objectId":${record.id}`));
        return {
          valid,
          secrets: { clientSecret },
          externalId: record.id,
          expectedKind: 'changes',
          forgeries: {
            badSignature: withHeader(
              valid,
              'x-hubspot-signature-v3',
              flip(header(valid, 'x-hubspot-signature-v3')),
            ),
            staleTimestamp: resign(valid, clientSecret, valid.receivedAt.getTime() - 6 * 60_000),
            tamperedBody: {
              ...valid,
              rawBody: valid.rawBody
                .replace('"Hook"', '"Hack"')
                .replace(/"attemptNumber":0/, '"attemptNumber":1'),
            },
          },
        };
      },
      injectFault: async (kind, count) => {
        await control(base, 'POST', '/_emulator/faults', {
          service: 'hubspot',
          kind,
          count,
          account: portalId,
        });
      },
      revokeToken: async () => {
        await control(base, 'POST', '/_emulator/faults', {
          service: 'hubspot',
          kind: 'revoke-token',
          count: 1,
          account: portalId,
        });
      },
      requests: async () =>
        control<LoggedRequest[]>(base, 'GET', `/_emulator/requests?service=hubspot&account=${portalId}`),
      isCreateRequest: (r) =>
        r.method === 'POST' &&
        (/\/batch\/(upsert|create)/.test(r.path) || /^\/crm\/v3\/objects\/[^/?]+(\?|$)/.test(r.path)),
      close: async () => {
        await receiver.close();
        await control(base, 'DELETE', portal);
        await deleteKeys(redis, `${budgetPrefix}:*`);
      },
    };
  }
}

async function control<T = unknown>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined
      ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const header = (r: WebhookRequest, name: string) => r.headers[name] ?? '';
const withHeader = (r: WebhookRequest, name: string, value: string): WebhookRequest => ({
  ...r,
  headers: { ...r.headers, [name]: value },
});
const flip = (s: string) => (s.startsWith('A') ? `B${s.slice(1)}` : `A${s.slice(1)}`);

/** A correctly signed request whose timestamp is `at` (the signature is valid, the age is not). */
function resign(r: WebhookRequest, secret: string, at: number): WebhookRequest {
  const signature = createHmac('sha256', secret)
    .update(`${r.method}${r.url}${r.rawBody}${at}`)
    .digest('base64');
  return {
    ...withHeader(
      withHeader(r, 'x-hubspot-request-timestamp', String(at)),
      'x-hubspot-signature-v3',
      signature,
    ),
  };
}
