import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_PREFIX } from '../../../../test/support/env';
import { signInAs } from '../testing/sign-in';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

/** A well-formed key no one was given: its prefix is new each time unless one is passed. */
const madeUpKey = (prefix = randomBytes(8).toString('hex')): string =>
  `sk_${prefix}_${randomBytes(32).toString('base64url')}`;

/** Whether the promise settles within `ms`. */
const within = (promise: Promise<unknown>, ms: number): Promise<'answered' | 'waiting'> =>
  Promise.race([
    promise.then(() => 'answered' as const),
    new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms)),
  ]);

describe('failed authentications', () => {
  // Two API processes on one Redis key space, as in production.
  const redisPrefix = `${TEST_REDIS_PREFIX}:auth-failures-${randomBytes(4).toString('hex')}`;
  let t: TestApp;
  let other: TestApp;
  let adminKey: string;

  const me = (app: TestApp, remoteAddress: string, authorization?: string) =>
    app.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      remoteAddress,
      ...(authorization === undefined ? {} : { headers: { authorization } }),
    });

  beforeAll(async () => {
    const env = { API_AUTH_FAILURES_PER_MIN: '3', REDIS_PREFIX: redisPrefix };
    t = await startTestApp('auth_failures', env);
    other = await startTestApp('auth_failures_other', env);
    ({ adminKey } = await seedWorkspace(t.prisma, 'Acme'));
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
    const redis = new Redis(t.config.REDIS_URL);
    const left = await redis.keys(`${redisPrefix}:*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
  });

  it('count a made-up session cookie like a made-up key, and refuse even a good session past the allowance', async () => {
    const { workspaceId } = await seedWorkspace(t.prisma, 'Cookies');
    const member = await signInAs(t.app, { workspaceId, email: 'ana@cookies.test', role: 'sales' });
    const withCookie = (cookie: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/me', remoteAddress: '10.0.9.1', headers: { cookie } });
    const guesses: number[] = [];
    for (let i = 0; i < 3; i++)
      guesses.push(
        (await withCookie(`syncline_session=${randomBytes(32).toString('base64url')}`)).statusCode,
      );
    expect(guesses).toEqual([401, 401, 401]);
    // The session still works until a guess goes past the allowance.
    expect((await withCookie(member.cookie)).statusCode).toBe(200);
    expect((await withCookie(`syncline_session=${randomBytes(32).toString('base64url')}`)).statusCode).toBe(
      429,
    );
    expect((await withCookie(member.cookie)).statusCode).toBe(429);
  });

  it('are limited per client address: 429 with Retry-After, then even a good key waits; other addresses go on', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await me(t, '10.0.0.1', `Bearer ${madeUpKey()}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401]);

    const refused = await me(t, '10.0.0.1', `Bearer ${madeUpKey()}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining('failed authentications') },
    });
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // Refused before the key is looked at: a right guess is not told apart from a wrong one.
    expect((await me(t, '10.0.0.1', bearer(adminKey).authorization)).statusCode).toBe(429);
    expect((await me(t, '10.0.0.1')).statusCode).toBe(429);
    // No proxy is trusted unless TRUST_PROXY says so: a forwarded address changes nothing.
    const forwarded = await t.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      remoteAddress: '10.0.0.1',
      headers: { ...bearer(adminKey), 'x-forwarded-for': '192.0.2.1' },
    });
    expect(forwarded.statusCode).toBe(429);

    expect((await me(t, '10.0.0.2', bearer(adminKey).authorization)).statusCode).toBe(200);
    expect((await me(t, '10.0.0.2', `Bearer ${madeUpKey()}`)).statusCode).toBe(401);
  });

  it('count only keys presented: requests without one are 401 as often as they come', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 6; i++) statuses.add((await me(t, '10.0.0.3')).statusCode);
    expect([...statuses]).toEqual([401]);
    expect((await me(t, '10.0.0.3', 'Basic Zm9vOmJhcg==')).statusCode).toBe(401);
  });

  it('are counted once for every API process (Redis), which expires the count', async () => {
    expect((await me(t, '10.0.0.4', `Bearer ${madeUpKey()}`)).statusCode).toBe(401);
    expect((await me(t, '10.0.0.4', 'Bearer not-a-key')).statusCode).toBe(401);
    expect((await me(other, '10.0.0.4', `Bearer ${madeUpKey()}`)).statusCode).toBe(401);
    expect((await me(other, '10.0.0.4', `Bearer ${madeUpKey()}`)).statusCode).toBe(429);
    const redis = new Redis(t.config.REDIS_URL);
    try {
      const keys = await redis.keys(`${redisPrefix}:api-auth-failures*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });

  it('an unknown prefix is answered from memory once found absent: no PostgreSQL round trip', async () => {
    const prefix = randomBytes(8).toString('hex');
    expect((await me(t, '10.0.0.5', `Bearer ${madeUpKey(prefix)}`)).statusCode).toBe(401);

    // Nothing can read api_key while this lock is held: a lookup would wait for it.
    const locker = new Client({ connectionString: t.db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE api_key IN ACCESS EXCLUSIVE MODE');
      const known = me(t, '10.0.0.6', `Bearer ${madeUpKey(prefix)}`);
      expect(await within(known, 1_000)).toBe('answered');
      expect((await known).statusCode).toBe(401);

      // A prefix not seen yet is looked up, and waits for the lock.
      const lookup = me(t, '10.0.0.7', `Bearer ${madeUpKey()}`);
      expect(await within(lookup, 500)).toBe('waiting');
      await locker.query('ROLLBACK');
      expect((await lookup).statusCode).toBe(401);
    } finally {
      await locker.end();
    }
  });
});
