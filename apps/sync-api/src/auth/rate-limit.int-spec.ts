import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInAs } from '../testing/sign-in';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

describe('per-key rate limit', () => {
  let t: TestApp;
  let adminKey: string;
  let salesKey: string;

  beforeAll(async () => {
    t = await startTestApp('rate_limit', { API_RATE_LIMIT_PER_10S: '4' });
    ({ adminKey } = await seedWorkspace(t.prisma, 'Acme'));
    salesKey = await createApiKey(t.app, adminKey, 'sales', 'rep');
  });
  afterAll(async () => {
    await t?.close();
  });

  const me = (key: string) => t.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });

  it('answers 429 with Retry-After past the allowance of a key; other keys keep theirs', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await me(salesKey)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const refused = await me(salesKey);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining('4 requests') },
    });
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(10);
    // The admin key used one request above (creating the sales key): it has three left.
    expect((await me(adminKey)).statusCode).toBe(200);
    // Unauthenticated requests are refused as such, not counted against anyone.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/me' })).statusCode).toBe(401);
  });

  it('counts a signed-in member like a key: their sessions share one allowance', async () => {
    const { workspaceId } = await seedWorkspace(t.prisma, 'Sessions');
    const first = await signInAs(t.app, { workspaceId, email: 'ana@sessions.test', role: 'sales' });
    const second = await signInAs(t.app, { workspaceId, email: 'ana@sessions.test', role: 'sales' });
    // Signing in read the session once each (GET /auth/session): two of the four used.
    const asMember = (cookie: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } });
    expect((await asMember(first.cookie)).statusCode).toBe(200);
    expect((await asMember(second.cookie)).statusCode).toBe(200);
    const refused = await asMember(first.cookie);
    expect(refused.statusCode).toBe(429);
    expect(refused.json<{ error: { message: string } }>().error.message).toContain('in this session');
  });

  it('counts in Redis, so every API process shares one allowance per key (the keys expire)', async () => {
    const redis = new Redis(t.config.REDIS_URL);
    try {
      const keys = await redis.keys(`${t.config.REDIS_PREFIX}:api-rate*`);
      // The two keys, and the member.
      expect(keys.length).toBe(3);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
