import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { hubspotBudgetLimits, RedisRateBudget } from './rate-budget';

describe('RedisRateBudget', () => {
  const prefix = `${TEST_REDIS_PREFIX}:connectors-budget-${randomBytes(4).toString('hex')}`;
  let a: Redis;
  let b: Redis;

  beforeAll(() => {
    // Two clients: two processes sharing one Redis.
    a = new Redis(TEST_REDIS_URL);
    b = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    const keys = await a.keys(`${prefix}:*`);
    if (keys.length > 0) await a.del(...keys);
    expect(await a.keys(`${prefix}:*`)).toEqual([]);
    a.disconnect();
    b.disconnect();
  });

  it('is one budget for two instances on the same connection: acquire waits, never fails', async () => {
    const connectionId = randomUUID();
    const limits = { default: { points: 5, durationSec: 1 } };
    const first = new RedisRateBudget(a, connectionId, limits, prefix);
    const second = new RedisRateBudget(b, connectionId, limits, prefix);
    const started = Date.now();
    const granted: number[] = [];
    await Promise.all(
      Array.from({ length: 15 }, async (_, i) => {
        await (i % 2 ? first : second).acquire();
        granted.push(Date.now() - started);
      }),
    );
    granted.sort((x, y) => x - y);
    // 15 requests at 5 per slot: three slots, so the last is granted two slots after the first.
    expect(granted[4]!).toBeLessThan(500);
    expect(granted[5]!).toBeGreaterThanOrEqual(900);
    expect(granted[14]!).toBeGreaterThanOrEqual(1_900);
    expect(granted[14]!).toBeLessThan(4_000);
  });

  it('keeps search apart from the default allowance, and connections apart', async () => {
    const connectionId = randomUUID();
    const limits = hubspotBudgetLimits({ per10s: 100, searchPerSecond: 4 }); // 9 per s, 2 searches per s
    expect(limits).toEqual({ default: { points: 9, durationSec: 1 }, search: { points: 2, durationSec: 1 } });
    const budget = new RedisRateBudget(a, connectionId, limits, prefix);
    const other = new RedisRateBudget(b, randomUUID(), limits, prefix);
    const started = Date.now();
    await Promise.all([budget.acquire('search'), budget.acquire('search')]);
    await Promise.all(Array.from({ length: 9 }, () => budget.acquire()));
    await Promise.all(Array.from({ length: 9 }, () => other.acquire()));
    expect(Date.now() - started).toBeLessThan(500);
    await budget.acquire('search'); // the third search waits for the next slot
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });
});
