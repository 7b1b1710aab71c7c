import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Pool } from 'pg';
import { freePort, REPO_ROOT, runScript } from '../apps/sync-api/src/testing/processes';
import { httpOk, spawnEntry } from '../e2e/support/launch';
import { LAST, seedPeople } from './people-seed';
import { emit, freshBenchDatabase, freshRedisPrefix, log } from './support';

/**
 * `api-read`: the sync API's two hot reads, `GET /api/v1/people/{id}` and a search, over a
 * workspace of 100,000 people at 200 concurrent connections (autocannon), and in the same run
 * a Fastify hello-world on this machine as the ceiling the ratio is taken against. The API is
 * the real process (auth, per-key limit in Redis, validation, two queries per record); the
 * people are written straight into the merged view, as the sync stage leaves it.
 */

const PREFIX = 'syncline-bench-api';
interface Measured {
  p50: number;
  p99: number;
  rps: number;
  non2xx: number;
  errors: number;
}

async function load(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; path: () => string },
): Promise<Measured> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers ?? {},
    requests: [
      {
        setupRequest: (req) => {
          req.path = options.path();
          return req;
        },
      },
    ],
  });
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: Math.round(result.requests.average),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export async function run(args: Record<string, number>): Promise<void> {
  const people = args.people ?? 100_000;
  const connections = args.connections ?? 200;
  const seconds = args.seconds ?? 10;
  const databaseUrl = await freshBenchDatabase('syncline_bench_api_read');
  const redisUrl = await freshRedisPrefix(PREFIX);

  const children: ChildProcess[] = [];
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    SYNCLINE_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    // The per-key limit stays on (its Redis call is part of every request) but out of reach.
    API_RATE_LIMIT_PER_10S: '1000000000',
  };
  const cli = await runScript('apps/sync-api/src/cli.ts', ['create-workspace', '--name', 'Bench'], env);
  if (cli.code !== 0) throw new Error(`create-workspace: ${cli.stderr}`);
  const { apiKey, workspaceId } = JSON.parse(cli.stdout.trim().split('\n').pop() ?? '{}') as {
    apiKey: string;
    workspaceId: string;
  };

  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  const seedStart = Date.now();
  const { sample } = await seedPeople(pool, workspaceId, people);
  await pool.end();
  log(`seeded ${people} people in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);

  const apiPort = await freePort();
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const tail: string[] = [];
  children.push(
    spawnEntry('api', {
      cwd: REPO_ROOT,
      // BENCH_PROFILE_DIR=/some/dir: the API writes a V8 CPU profile there when the bench ends.
      env: {
        ...env,
        HOST: '127.0.0.1',
        PORT: String(apiPort),
        ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
      },
      onLine: (line) => {
        tail.push(line);
        if (tail.length > 50) tail.shift();
      },
    }),
  );
  const helloPort = await freePort();
  const hello = spawn(
    process.execPath,
    [
      '-e',
      `const app = require('fastify')(); app.get('/', async () => ({ hello: 'world' }));
       app.listen({ port: ${helloPort}, host: '127.0.0.1' });`,
    ],
    { cwd: REPO_ROOT, stdio: 'ignore' },
  );
  children.push(hello);
  const api = `http://127.0.0.1:${apiPort}`;
  const deadline = Date.now() + 60_000;
  while (!(await httpOk(`${api}/readyz`)) || !(await httpOk(`http://127.0.0.1:${helloPort}/`))) {
    if (Date.now() > deadline) throw new Error(`API not ready:\n${tail.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
  const auth = { authorization: `Bearer ${apiKey}` };
  // Warm both servers (JIT, connection pools) before measuring.
  await load(api, {
    connections: 20,
    seconds: 2,
    headers: auth,
    path: () => `/api/v1/people/${pick(sample).id}`,
  });
  await load(`http://127.0.0.1:${helloPort}`, { connections: 20, seconds: 1, path: () => '/' });

  const helloRun = await load(`http://127.0.0.1:${helloPort}`, { connections, seconds, path: () => '/' });
  log(`hello: ${JSON.stringify(helloRun)}`);
  const get = await load(api, {
    connections,
    seconds,
    headers: auth,
    path: () => `/api/v1/people/${pick(sample).id}`,
  });
  log(`get: ${JSON.stringify(get)}`);
  // What a salesperson types to find someone: part of a name-and-address, one match.
  const search = await load(api, {
    connections,
    seconds,
    headers: auth,
    path: () => `/api/v1/people?q=${encodeURIComponent(pick(sample).email.split('@')[0]!)}&limit=20`,
  });
  log(`search: ${JSON.stringify(search)}`);
  // A broad search: a surname one person in ten has, first page by name.
  const broad = await load(api, {
    connections,
    seconds,
    headers: auth,
    path: () => `/api/v1/people?q=${encodeURIComponent(pick(LAST).toLowerCase())}&sort=name&limit=20`,
  });
  log(`broad search: ${JSON.stringify(broad)}`);

  emit({
    bench: 'api-read',
    people,
    connections,
    get_p99_ms: get.p99,
    search_p99_ms: search.p99,
    get_rps: get.rps,
    search_rps: search.rps,
    hello_rps: helloRun.rps,
    ratio: Number((get.rps / helloRun.rps).toFixed(3)),
    get_p50_ms: get.p50,
    search_p50_ms: search.p50,
    broad_search_p99_ms: broad.p99,
    broad_search_rps: broad.rps,
    hello_p99_ms: helloRun.p99,
    non_2xx: get.non2xx + search.non2xx + broad.non2xx,
    errors: get.errors + search.errors + broad.errors,
  });
  if (profileDir) {
    // A profile is written on a graceful exit only.
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 5_000));
  }
  for (const child of children) child.kill('SIGKILL');
}
