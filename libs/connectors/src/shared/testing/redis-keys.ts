import type { Redis } from 'ioredis';

/** Deletes every key matching `pattern` (SCAN, never KEYS); tests clean their `syncline-test:` keys with it. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  if (!pattern.startsWith('syncline-test'))
    throw new Error(`refusing to delete outside syncline-test: ${pattern}`);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
