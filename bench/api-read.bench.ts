import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { freePort, REPO_ROOT, runScript } from '../apps/sync-api/src/testing/processes';
import { httpOk, spawnEntry } from '../e2e/support/launch';
import { emit, freshBenchDatabase, log } from './support';

/**
 * `api-read`: the sync API's two hot reads, `GET /api/v1/people/{id}` and a search, over a
 * workspace of 100,000 people at 200 concurrent connections (autocannon), and in the same run
 * a Fastify hello-world on this machine as the ceiling the ratio is taken against. The API is
 * the real process (auth, per-key limit in Redis, validation, two queries per record); the
 * people are written straight into the merged view, as the sync stage leaves it.
 */

const PREFIX = 'syncline-bench-api';
const FIRST = ['Ada', 'Grace', 'Alan', 'Katherine', 'Emmy', 'Hedy', 'Barbara', 'Edsger', 'Donald', 'Frances'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Noether',
  'Lamarr',
  'Liskov',
  'Dijkstra',
  'Knuth',
  'Allen',
];

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
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(redisUrl);
  for (const key of await redis.keys(`${PREFIX}:*`)) await redis.del(key);
  redis.disconnect();

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
  const { rows: connection } = await pool.query<{ id: string }>(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES (gen_random_uuid(), $1, 'hubspot', '4711', 'live') RETURNING id::text`,
    [workspaceId],
  );
  // Each person: a name, an address at one of 5,000 companies, a phone, provenance for every
  // field and a link to its CRM record, as the sync stage writes them.
  await pool.query(
    `WITH p AS (
       SELECT i, gen_random_uuid() AS id, ($3::text[])[1 + i % 10] AS first, ($4::text[])[1 + (i / 10) % 10] AS last
         FROM generate_series(1, $2::int) AS i)
     INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, provenance, version, heads)
     SELECT id, $1::uuid, 'person', first || ' ' || last,
            jsonb_build_object('email', lower(first) || '.' || lower(last) || '.' || i || '@company' || (i % 5000) || '.example',
                               'firstName', first, 'lastName', last, 'phone', '+1555' || lpad(i::text, 7, '0'),
                               'jobTitle', 'Account Executive', 'ownerId', 'owner-' || (i % 25)),
            jsonb_build_object('email', jsonb_build_object('source', jsonb_build_object('kind', 'connection', 'id', $5::text),
                                                           'eventTime', '2026-11-30T10:00:00.000Z', 'conflicted', false)),
            1, ARRAY['head-' || i]
       FROM p`,
    [workspaceId, people, FIRST, LAST, connection[0]!.id],
  );
  await pool.query(
    `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
     SELECT workspace_id, $1::uuid, 'person', 'c' || row_number() OVER (), id FROM entity WHERE entity_type = 'person'`,
    [connection[0]!.id],
  );
  // What autovacuum does to a table after a load this size (this machine's server runs with it
  // off): statistics for the planner, and the GIN pending lists moved into the index proper,
  // which every search would otherwise read in full (see TableStatisticsService).
  await pool.query('VACUUM ANALYZE');
  const { rows: sample } = await pool.query<{ id: string; email: string }>(
    `SELECT id::text, fields->>'email' AS email FROM entity ORDER BY random() LIMIT 20000`,
  );
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
