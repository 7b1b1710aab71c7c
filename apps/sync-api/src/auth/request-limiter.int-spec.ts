import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import type { AppConfig } from '../config/app-config';
import { RequestLimiter } from './request-limiter';

/** The per-key limit against the real Redis: shared between processes, taken in blocks. */
describe('RequestLimiter', () => {
  let redis: Redis;
  const prefix = `${TEST_REDIS_PREFIX}:limiter-${randomUUID()}:`;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { keyPrefix: prefix });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(prefix.length)));
    redis.disconnect();
  });

  /** One API process's limiter. */
  const limiter = (perTenSeconds: number) =>
    new RequestLimiter(redis, { API_RATE_LIMIT_PER_10S: perTenSeconds } as AppConfig);
  /** What the shared count in Redis says this key has used. */
  const counted = async (keyId: string) => Number(await redis.get(`api-rate:${keyId}`));
  const allowedOf = async (process: RequestLimiter, keyId: string, requests: number) => {
    let allowed = 0;
    for (let i = 0; i < requests; i++) if ((await process.take(keyId)) === null) allowed++;
    return allowed;
  };

  it('takes a block of a hundredth of the allowance from Redis and serves it from memory', async () => {
    const keyId = randomUUID();
    const api = limiter(1_000);
    expect(await allowedOf(api, keyId, 5)).toBe(5);
    expect(await counted(keyId)).toBe(10);
    expect(await allowedOf(api, keyId, 6)).toBe(6);
    expect(await counted(keyId)).toBe(20);
  });

  it('allows the allowance to one process, never more, then answers with the wait', async () => {
    const keyId = randomUUID();
    const api = limiter(1_000);
    // All of it, unless the machine stalled past a lease's second (its unused rest lapses).
    const allowed = await allowedOf(api, keyId, 1_000);
    expect(allowed).toBeLessThanOrEqual(1_000);
    expect(allowed).toBeGreaterThan(1_000 - 2 * 10);
    const wait = await api.take(keyId);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(10);
  });

  it('shares one allowance between processes: never more, short by less than a block each', async () => {
    const keyId = randomUUID();
    const processes = [limiter(1_000), limiter(1_000), limiter(1_000)];
    let allowed = 0;
    for (let round = 0; round < 500; round++)
      for (const api of processes) if ((await api.take(keyId)) === null) allowed++;
    expect(allowed).toBeLessThanOrEqual(1_000);
    expect(allowed).toBeGreaterThan(1_000 - 3 * 10);
  });

  it('counts one request at a time below 200 per 10 s, exactly', async () => {
    const keyId = randomUUID();
    const api = limiter(50);
    expect(await allowedOf(api, keyId, 60)).toBe(50);
    expect(await counted(keyId)).toBe(60);
  });

  it('requests that arrive together wait for one refill, and none is counted twice', async () => {
    const keyId = randomUUID();
    const api = limiter(1_000);
    const answers = await Promise.all(Array.from({ length: 95 }, () => api.take(keyId)));
    expect(answers.every((a) => a === null)).toBe(true);
    expect(await counted(keyId)).toBe(100);
  });
});
