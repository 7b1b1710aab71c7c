import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { freePort, REPO_ROOT, runScript } from '../apps/sync-api/src/testing/processes';
import { httpOk, spawnEntry } from '../e2e/support/launch';
import { freshBenchDatabase, freshRedisPrefix } from './support';

/** The signed-in admin of a browser bench's workspace. */
export const WEB_BENCH_ADMIN = 'bench.admin@syncline.test';

export interface WebBenchStack {
  /** The API's base URL; it serves the built app (apps/web/dist) and the data. */
  api: string;
  /** A one-time sign-in link for WEB_BENCH_ADMIN. */
  signInUrl: string;
  /** Kills the API. */
  stop(): void;
}

/**
 * A fresh database and Redis prefix, a workspace with WEB_BENCH_ADMIN as its admin, `seed`'s
 * rows written straight into the database, then the API process, ready, and a sign-in link:
 * what the browser benches share.
 */
export async function startWebBenchStack<T>(options: {
  database: string;
  redisPrefix: string;
  seed: (pool: Pool, workspaceId: string) => Promise<T>;
}): Promise<WebBenchStack & { seeded: T }> {
  const databaseUrl = await freshBenchDatabase(options.database);
  const redisUrl = await freshRedisPrefix(options.redisPrefix);
  const children: ChildProcess[] = [];
  const stop = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.once('exit', stop);
  const apiPort = await freePort();
  const api = `http://127.0.0.1:${apiPort}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: options.redisPrefix,
    LOG_LEVEL: 'warn',
    SYNCLINE_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    PUBLIC_BASE_URL: api,
    API_METRICS_PORT: '0',
  };
  const cli = await runScript(
    'apps/sync-api/src/cli.ts',
    ['create-workspace', '--name', 'Bench', '--admin-email', WEB_BENCH_ADMIN],
    env,
  );
  if (cli.code !== 0) throw new Error(`create-workspace: ${cli.stderr}`);
  const { workspaceId } = JSON.parse(cli.stdout.trim().split('\n').pop() ?? '{}') as { workspaceId: string };
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  let seeded: T;
  try {
    seeded = await options.seed(pool, workspaceId);
  } finally {
    await pool.end();
  }

  const tail: string[] = [];
  children.push(
    spawnEntry('api', {
      cwd: REPO_ROOT,
      env: { ...env, HOST: '127.0.0.1', PORT: String(apiPort) },
      onLine: (line) => {
        tail.push(line);
        if (tail.length > 50) tail.shift();
      },
    }),
  );
  const deadline = Date.now() + 60_000;
  while (!(await httpOk(`${api}/readyz`))) {
    if (Date.now() > deadline) {
      stop();
      throw new Error(`API not ready:\n${tail.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const link = await runScript('apps/sync-api/src/cli.ts', ['sign-in-link', '--email', WEB_BENCH_ADMIN], env);
  const signInUrl = /https?:\/\/\S+/.exec(link.stdout)?.[0];
  if (link.code !== 0 || !signInUrl) {
    stop();
    throw new Error(`sign-in-link: ${link.stderr || link.stdout}`);
  }
  return { api, signInUrl, stop, seeded };
}
