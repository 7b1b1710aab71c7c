import { cpus, totalmem } from 'node:os';
import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import { ensureDatabase, migrate } from '../prisma/migrator';

const SERVER = process.env.BENCH_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';

/**
 * A freshly migrated database of the bench's own, dropped and made anew on each run. The run
 * holds it for its whole life (a session advisory lock on the server, released when the
 * process ends): a second run of a bench of the same database refuses to start, instead of
 * dropping the first one's database and Redis keys under it (measured: one run lost every
 * value, the other printed a rate 25 % too high).
 */
export async function freshBenchDatabase(name: string): Promise<string> {
  await holdForThisRun(name);
  const admin = new Pool({ connectionString: `${SERVER}/postgres`, max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
  const url = `${SERVER}/${name}`;
  await ensureDatabase(url);
  await migrate(url);
  return url;
}

async function holdForThisRun(name: string): Promise<void> {
  const client = new Client({ connectionString: `${SERVER}/postgres` });
  await client.connect();
  const { rows } = await client.query<{ ok: boolean }>(
    `SELECT pg_try_advisory_lock(hashtext('syncline-bench'), hashtext($1)) AS ok`,
    [name],
  );
  if (rows[0]?.ok !== true) {
    await client.end();
    throw new Error(
      `another bench run is using its database ${name} on this server: run benches one at a time`,
    );
  }
  // Held until the process ends, without keeping it alive.
  (client as unknown as { connection: { stream: { unref(): void } } }).connection.stream.unref();
}

export function machine(): string {
  return `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export const log = (...args: unknown[]): void => {
  process.stderr.write(`${args.join(' ')}\n`);
};

/** The Redis the benches' processes share, and a bench's own key prefix emptied of an earlier run's keys. */
export async function freshRedisPrefix(prefix: string): Promise<string> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url);
  for (const key of await redis.keys(`${prefix}:*`)) await redis.del(key);
  redis.disconnect();
  return url;
}

/** The p-th percentile (nearest rank) of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
