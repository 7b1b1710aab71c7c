import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../../../test/support/env';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { oauthStateKey } from './oauth-state.repository';
import {
  approveConsent,
  callbackPath,
  createPortal,
  deniedCallbackPath,
  type OAuthEmulators,
  startOAuthEmulators,
} from './oauth-testing';

interface StartBody {
  authorizeUrl: string;
  state: string;
}
interface ErrorBody {
  error: { code: string; message: string };
}

const PORTAL = 62_001;
const hubspotCallback = (query: Record<string, string>): string =>
  `/api/v1/connections/oauth/hubspot/callback?${new URLSearchParams(query)}`;

describe('OAuth states: single use, expiring, for one provider; denied and refused consents', () => {
  let oauth: OAuthEmulators;
  let t: TestApp;
  let redis: Redis;
  let a: { workspaceId: string; adminKey: string };

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key?: string, payload?: object) =>
    t.app.inject({ method, url, ...(key ? { headers: bearer(key) } : {}), ...(payload ? { payload } : {}) });
  const start = async (provider: 'hubspot' | 'google', key = a.adminKey): Promise<StartBody> => {
    const res = await call(
      'POST',
      `/api/v1/connections/oauth/${provider}/start`,
      key,
      provider === 'google' ? { products: ['gmail'] } : undefined,
    );
    expect(res.statusCode).toBe(201);
    return res.json<StartBody>();
  };
  const expectError = (res: LightMyRequestResponse, status: number, code: string): string => {
    expect(res.statusCode).toBe(status);
    const body = res.json<ErrorBody>();
    expect(body.error.code).toBe(code);
    return body.error.message;
  };
  const connectionCount = () => t.prisma.connection.count({ where: { workspaceId: a.workspaceId } });

  beforeAll(async () => {
    oauth = await startOAuthEmulators();
    await createPortal(oauth.emulators, PORTAL);
    t = await startTestApp('oauth_state', oauth.env);
    a = await seedWorkspace(t.prisma, 'Acme');
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    if (redis) {
      const left = await redis.keys(`${t.config.REDIS_PREFIX}:oauth-state:*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
    }
    await t?.close();
    await oauth?.close();
  });

  it('400 oauth_state_invalid for a state that was never issued, and validation_failed without one', async () => {
    const message = expectError(
      await call('GET', hubspotCallback({ code: 'abc', state: 'made-up-state' })),
      400,
      'oauth_state_invalid',
    );
    expect(message).toMatch(/unknown, expired or already used/);
    expectError(await call('GET', hubspotCallback({ code: 'abc' })), 400, 'validation_failed');
    expectError(await call('GET', hubspotCallback({ state: 'x' })), 400, 'validation_failed');
  });

  it('a state is good once: replaying the redirect that connected is refused', async () => {
    const before = await connectionCount();
    const redirect = await approveConsent((await start('hubspot')).authorizeUrl, { portalId: PORTAL });
    expect((await call('GET', callbackPath(redirect))).statusCode).toBe(200);
    expect(await connectionCount()).toBe(before + 1);

    expectError(await call('GET', callbackPath(redirect)), 400, 'oauth_state_invalid');
    // A fresh code with the used state is refused just the same.
    const again = new URL(redirect);
    again.searchParams.set('code', 'another-code');
    expectError(await call('GET', callbackPath(again)), 400, 'oauth_state_invalid');
  });

  it('an expired state is refused (Redis drops it after its TTL)', async () => {
    const started = await start('hubspot');
    const redirect = await approveConsent(started.authorizeUrl, { portalId: PORTAL });
    const key = `${t.config.REDIS_PREFIX}:${oauthStateKey(started.state)}`;
    expect(await redis.pexpire(key, 1)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = await connectionCount();
    expectError(await call('GET', callbackPath(redirect)), 400, 'oauth_state_invalid');
    expect(await connectionCount()).toBe(before);
  });

  it("a state used at another provider's callback is refused, and spent", async () => {
    const google = await start('google');
    const message = expectError(
      await call('GET', hubspotCallback({ code: 'abc', state: google.state })),
      400,
      'oauth_state_invalid',
    );
    expect(message).toContain('google');
    // Spent: even its own provider's callback now refuses it.
    const redirect = await approveConsent(google.authorizeUrl, { email: 'spent@acme.example' });
    expectError(await call('GET', callbackPath(redirect)), 400, 'oauth_state_invalid');
  });

  it('a denied consent is 403 oauth_consent_denied, connects nothing, and spends the state', async () => {
    for (const provider of ['hubspot', 'google'] as const) {
      const started = await start(provider);
      const before = await connectionCount();
      const message = expectError(
        await call('GET', deniedCallbackPath(provider, started.state)),
        403,
        'oauth_consent_denied',
      );
      expect(message).toContain('denied');
      expect(await connectionCount()).toBe(before);
      expectError(await call('GET', deniedCallbackPath(provider, started.state)), 400, 'oauth_state_invalid');
    }
  });

  it('another provider error on the redirect is 400 oauth_failed', async () => {
    const started = await start('hubspot');
    const message = expectError(
      await call('GET', hubspotCallback({ error: 'server_error', state: started.state })),
      400,
      'oauth_failed',
    );
    expect(message).toContain('server_error');
  });

  it('a code the provider refuses is 400 oauth_failed, and the state is spent', async () => {
    const started = await start('hubspot');
    const before = await connectionCount();
    const message = expectError(
      await call('GET', hubspotCallback({ code: 'not-a-code', state: started.state })),
      400,
      'oauth_failed',
    );
    expect(message).toContain('BAD_AUTH_CODE');
    expect(await connectionCount()).toBe(before);
    expectError(
      await call('GET', hubspotCallback({ code: 'not-a-code', state: started.state })),
      400,
      'oauth_state_invalid',
    );
  });

  it("a state's sealed PKCE verifier opens under that state only: its record copied onto another is refused", async () => {
    const key = (state: string) => `${t.config.REDIS_PREFIX}:${oauthStateKey(state)}`;
    const one = await start('google');
    const two = await start('google');
    const copied = await redis.get(key(one.state));
    expect(await redis.set(key(two.state), copied!, 'KEEPTTL')).toBe('OK');
    const redirect = await approveConsent(two.authorizeUrl, { email: 'moved@acme.example' });
    const before = await connectionCount();
    expectError(await call('GET', callbackPath(redirect)), 400, 'oauth_state_invalid');
    expect(await connectionCount()).toBe(before);
  });

  it('a state started by a key revoked before the callback connects nothing', async () => {
    const created = await call('POST', '/api/v1/api-keys', a.adminKey, { name: 'ops', role: 'admin' });
    const { id, key } = created.json<{ id: string; key: string }>();
    const started = await start('hubspot', key);
    const redirect = await approveConsent(started.authorizeUrl, { portalId: PORTAL });
    expect((await call('DELETE', `/api/v1/api-keys/${id}`, a.adminKey)).statusCode).toBe(204);
    const before = await connectionCount();
    expectError(await call('GET', callbackPath(redirect)), 403, 'forbidden');
    expect(await connectionCount()).toBe(before);
  });
});

describe('OAuth without a client configured', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('oauth_unconfigured');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('start answers 503 naming the missing settings', async () => {
    const { adminKey } = await seedWorkspace(t.prisma, 'Acme');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/connections/oauth/google/start',
      headers: bearer(adminKey),
      payload: { products: ['gmail'] },
    });
    expect(res.statusCode).toBe(503);
    const { error } = res.json<ErrorBody>();
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('GOOGLE_CLIENT_ID');
    expect(error.message).toContain('GOOGLE_CLIENT_SECRET');
  });
});
