import type { Logger } from '@syncline/core';
import { withGenericPlans } from '@syncline/log';
import { Redis } from 'ioredis';
import { Pool } from 'pg';

/** Injection tokens for the process's shared connections and root logger. */
export const PG_POOL = Symbol('PG_POOL');
export const REDIS = Symbol('REDIS');
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

const CONNECT_TIMEOUT_MS = 5_000;

/** A dependency that is not there at start: the process stops with this message. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Host, port and database of a URL without its credentials, for messages and logs. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

// Tables the workers write or delete from; missing ones mean the database is not migrated.
const REQUIRED_TABLES = ['change_event', 'consumer_offset', 'log_partition', 'dead_letter'];

/** Opens the pool and proves the database answers and is migrated, or throws a StartupError. */
export async function connectPostgres(url: string, logger: Logger): Promise<Pool> {
  const pool = new Pool(
    withGenericPlans({ connectionString: url, max: 5, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }),
  );
  // An idle client losing its connection emits on the pool; unhandled it would crash the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'idle postgres connection failed'));
  try {
    const { rows } = await pool.query<{ name: string }>(
      'SELECT t.name FROM unnest($1::text[]) AS t(name) WHERE to_regclass(t.name) IS NULL',
      [REQUIRED_TABLES],
    );
    if (rows.length > 0) {
      throw new StartupError(
        `Postgres at ${describeUrl(url)} (DATABASE_URL) is not migrated: missing ${rows.map((r) => r.name).join(', ')}; run npm run migrate`,
      );
    }
    return pool;
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof StartupError) throw error;
    throw new StartupError(
      `cannot reach Postgres at ${describeUrl(url)} (DATABASE_URL): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Opens the Redis connection BullMQ shares and proves it answers, or throws a StartupError.
 * After start it reconnects forever: a Redis restart pauses the workers instead of killing them.
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    // BullMQ's blocking commands must wait through reconnects, not fail after N retries.
    maxRetriesPerRequest: null,
    connectTimeout: CONNECT_TIMEOUT_MS,
    connectionName: 'syncline-workers',
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  let connected = false;
  let down = false;
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
    // Before start the StartupError says it; after, only the first failure of an outage
    // (ioredis reports every reconnect attempt).
    if (connected && !down) logger.warn({ err: error }, 'redis connection failed; retrying');
    down = true;
  });
  redis.on('ready', () => {
    down = false;
  });
  try {
    await withTimeout(
      (async () => {
        await redis.connect();
        await redis.ping();
      })(),
      CONNECT_TIMEOUT_MS,
    );
    connected = true;
    return redis;
  } catch (error) {
    redis.disconnect();
    // ioredis rejects with "Connection is closed"; the socket error before it says why.
    const reason = (lastError ?? (error as Error)).message;
    throw new StartupError(`cannot reach Redis at ${describeUrl(url)} (REDIS_URL): ${reason}`, {
      cause: error,
    });
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
