import { cpus, totalmem } from 'node:os';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { ensureDatabase, migrate } from '../prisma/migrator';

const SERVER = process.env.BENCH_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';

/** A freshly migrated database of the bench's own, dropped and made anew on each run. */
export async function freshBenchDatabase(name: string): Promise<string> {
  const admin = new Pool({ connectionString: `${SERVER}/postgres`, max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
  const url = `${SERVER}/${name}`;
  await ensureDatabase(url);
  await migrate(url);
  return url;
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
