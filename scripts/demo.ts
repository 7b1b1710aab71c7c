import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  type WriteStream,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import { freePort, runScript } from '../apps/sync-api/src/testing/processes';
import { type EmulatorUrls, emulatorClient } from '../e2e/support/emulator-client';
import {
  emulatorsReady,
  emulatorUrlsFrom,
  httpOk,
  type ProcessKind,
  providerSettings,
  spawnEntry,
} from '../e2e/support/launch';
import { ensureDatabase, migrate } from '../prisma/migrator';
import {
  DEMO_HUBSPOT_APP,
  type DemoSystem,
  type DemoWorld,
  planDemoWorld,
  seedDemoWorld,
} from './demo-world';
import { type DemoOutlookUser, describeOutlookUser, seedOutlookUser } from './demo-world-outlook';

/**
 * `npm run demo`: the product's main job on this machine. The HubSpot and Google emulators,
 * the API and the workers run as child processes on a fresh `syncline_demo` database; a
 * salesperson's world is seeded in the emulators (two CRMs that share people written
 * differently, a calendar, a mailbox, a task list); the five accounts are connected through
 * the API; the workers backfill them, resolve one person per human, merge, write back what
 * each system lacks, and settle planted conflicting edits by policy. Then it prints what to
 * look at and keeps syncing until Ctrl-C (`DEMO_EXIT=1` or `--exit`: exits after the report).
 */

const root = join(__dirname, '..');
const started = Date.now();
const exitAfterReport = process.env.DEMO_EXIT === '1' || process.argv.includes('--exit');
const pgServer = (process.env.DEMO_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const databaseUrl = `${pgServer}/syncline_demo`;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_PREFIX = 'syncline-demo';
const PULL_INTERVAL_MS = 2_000;
const people = Number(process.env.DEMO_PEOPLE ?? 300);
/** Who signs in to the app: the workspace's first admin, and the salesperson of the demo world. */
const DEMO_ADMIN = { email: 'morgan.reyes@brightwave.io', name: 'Morgan Reyes' };
const DEMO_SALES = { email: 'dana.okafor@brightwave.io', name: 'Dana Okafor' };
const deadline = started + Number(process.env.DEMO_TIMEOUT_MS ?? 300_000);
const logDir = join(root, '.tools', 'demo-logs');

const say = (line = '') => console.log(line);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const elapsed = () => secs(Date.now() - started);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const step = (n: number, title: string) => say(`\n${n}. ${title}  [${elapsed()}]`);

class DemoFailure extends Error {}

// ---------------------------------------------------------------------------------------
// 1. PostgreSQL and Redis

interface SourceLinkView {
  connectionId: string;
  externalId: string;
}

async function reachPostgres(): Promise<string | undefined> {
  const client = new Client({ connectionString: `${pgServer}/postgres`, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function reachRedis(): Promise<string | undefined> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    redis.disconnect();
  }
}

function dockerCompose(): boolean {
  const res = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore', timeout: 15_000 });
  return res.status === 0;
}

async function ensureServices(): Promise<void> {
  let [pg, redis] = await Promise.all([reachPostgres(), reachRedis()]);
  if (!pg && !redis) {
    say(`   PostgreSQL at ${pgServer} and Redis at ${redisUrl}: reachable`);
    return;
  }
  const missing = [
    ...(pg ? [`PostgreSQL at ${pgServer} (${pg})`] : []),
    ...(redis ? [`Redis at ${redisUrl} (${redis})`] : []),
  ];
  if (dockerCompose()) {
    say(`   not reachable: ${missing.join('; ')}`);
    say('   starting them with `docker compose up -d` (docker-compose.yml)…');
    const up = spawnSync('docker', ['compose', 'up', '-d'], { cwd: root, stdio: 'inherit' });
    if (up.status !== 0) throw new DemoFailure(`docker compose up -d exited with ${up.status}`);
    const until = Date.now() + 120_000;
    while (Date.now() < until) {
      [pg, redis] = await Promise.all([reachPostgres(), reachRedis()]);
      if (!pg && !redis) {
        say('   PostgreSQL and Redis are up');
        return;
      }
      await sleep(1_000);
    }
    throw new DemoFailure(
      `after docker compose up -d, still not reachable: ${[pg && 'PostgreSQL', redis && 'Redis'].filter(Boolean).join(', ')}`,
    );
  }
  console.error(
    [
      '',
      'The demo needs PostgreSQL and Redis, and cannot reach:',
      ...missing.map((m) => `  - ${m}`),
      '',
      'Start them, then run `npm run demo` again. Any one of:',
      '  - with Docker (compose plugin):  docker compose up -d',
      '  - on Debian/Ubuntu, installed but stopped:',
      ...(pg ? ['      pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start'] : []),
      ...(redis ? ["      redis-server --daemonize yes --save '' --appendonly no"] : []),
      '  - on Debian/Ubuntu, not installed:  apt-get install postgresql redis-server',
      '    (PostgreSQL must let user `postgres` in over TCP without a password: trust auth for 127.0.0.1)',
      '  - elsewhere:  DEMO_PG_SERVER=postgresql://user@host:port  REDIS_URL=redis://host:port  npm run demo',
      '',
    ].join('\n'),
  );
  process.exit(1);
}

async function clearRedisPrefix(): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let removed = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) removed += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return removed;
}

function demoKey(): string {
  const dir = join(root, '.tools');
  const file = join(dir, 'demo-encryption-key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `demo:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

// ---------------------------------------------------------------------------------------
// 3. The processes

interface Proc {
  name: string;
  child: ChildProcess;
  tail: string[];
  log: WriteStream;
  logFile: string;
  exited: Promise<void>;
  stopping: boolean;
}

const procs: Proc[] = [];
const running = (p: Proc) => p.child.exitCode === null && p.child.signalCode === null;

function start(name: string, kind: ProcessKind, env: NodeJS.ProcessEnv): Proc {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'w' });
  const tail: string[] = [];
  const child = spawnEntry(kind, {
    cwd: root,
    env,
    detached: true,
    onLine: (line) => {
      log.write(`${line}\n`);
      tail.push(line);
      if (tail.length > 60) tail.shift();
    },
  });
  const proc: Proc = {
    name,
    child,
    tail,
    log,
    logFile,
    stopping: false,
    exited: new Promise((done) => child.once('exit', () => done())),
  };
  child.once('exit', (code, signal) => {
    log.end(`--- exited (code ${code}, signal ${signal}) ---\n`);
    if (!proc.stopping) console.error(`\n!! ${name} exited unexpectedly (code ${code}, signal ${signal})`);
  });
  procs.push(proc);
  return proc;
}

const tailOf = (p: Proc, n = 25) =>
  `--- last lines of ${relative(root, p.logFile)} ---\n${p.tail.slice(-n).join('\n')}`;

async function ready(p: Proc, what: string, probe: () => Promise<boolean>, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!running(p)) throw new DemoFailure(`${p.name} exited while starting\n${tailOf(p)}`);
    if (await probe()) return;
    await sleep(150);
  }
  throw new DemoFailure(`${p.name} was not ready after ${secs(timeoutMs)} (${what})\n${tailOf(p)}`);
}

/** Workers first, then the API, the emulators last (a draining worker may still call them). */
async function stopAll(): Promise<void> {
  const rank = (name: string) => (name.startsWith('workers') ? 0 : name === 'api' ? 1 : 2);
  for (const p of [...procs].sort((a, b) => rank(a.name) - rank(b.name))) {
    p.stopping = true;
    if (!running(p)) continue;
    p.child.kill('SIGTERM');
    const gone = await Promise.race([p.exited.then(() => true), sleep(10_000).then(() => false)]);
    if (!gone) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
}

process.once('exit', () => {
  for (const p of procs) if (running(p)) p.child.kill('SIGKILL');
});

// The children run in process groups of their own (a Ctrl-C reaches only us): on Ctrl-C we
// stop them in order. While the demo keeps running after its report, Ctrl-C ends that wait.
let stopRequested: (() => void) | undefined;
let interrupted = false;
const onSignal = () => {
  if (stopRequested) return stopRequested();
  if (interrupted) {
    for (const p of procs) if (running(p)) p.child.kill('SIGKILL');
    process.exit(130);
  }
  interrupted = true;
  console.error('\nInterrupted: stopping the processes (Ctrl-C again to kill them)…');
  void stopAll().then(() => process.exit(130));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

async function pickPort(preferred: number): Promise<number> {
  return (await portFree(preferred)) ? preferred : freePort();
}

// ---------------------------------------------------------------------------------------
// The API, as a client

interface ConnectionView {
  id: string;
  provider: string;
  externalAccountId: string;
  displayName: string | null;
  status: string;
  statusReason: string | null;
  state: {
    status: string;
    reason: string | null;
    backfill: { seen: number; estimatedTotal: number | null };
    lag: { events: number };
    lastErrorCode: string | null;
  };
}

interface RecordView {
  id: string;
  type: string;
  displayName: string | null;
  fields: Record<string, unknown>;
  provenance: Record<
    string,
    { source: { kind: string; id: string }; eventTime: string; conflicted: boolean }
  >;
  sourceLinks: Array<{ connectionId: string; provider: string | null; externalId: string }>;
  openConflicts: unknown[];
}

function apiClient(base: string, key: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (!res.ok) throw new DemoFailure(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
type Api = ReturnType<typeof apiClient>;

// ---------------------------------------------------------------------------------------
// 7. Waiting for the sync to settle

interface Snapshot {
  connections: ConnectionView[];
  pending: number;
  failed: number;
  sent: number;
  deadLetters: number;
  unreconciled: number;
  events: number;
}

async function snapshot(api: Api, pool: Pool): Promise<Snapshot> {
  const [{ data }, outbox, dead, conn, events] = await Promise.all([
    api<{ data: ConnectionView[] }>('GET', '/api/v1/connections'),
    pool.query<{ pending: number; failed: number; sent: number }>(
      `SELECT count(*) FILTER (WHERE status IN ('pending', 'sending'))::int AS pending,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'sent')::int AS sent FROM outbox`,
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM dead_letter WHERE status = 'open'`),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM connection WHERE reconciled_at IS NULL`),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event'),
  ]);
  return {
    connections: data,
    pending: outbox.rows[0]!.pending,
    failed: outbox.rows[0]!.failed,
    sent: outbox.rows[0]!.sent,
    deadLetters: dead.rows[0]!.n,
    unreconciled: conn.rows[0]!.n,
    events: events.rows[0]!.n,
  };
}

const settled = (s: Snapshot) =>
  s.connections.length > 0 &&
  s.connections.every((c) => c.state.status === 'live' && c.state.lag.events === 0) &&
  s.unreconciled === 0 &&
  s.pending === 0;

function progressLine(s: Snapshot, labels: Map<string, string>, t0: number): string {
  const parts = s.connections.map((c) => {
    const { backfill, lag, status } = c.state;
    const total = backfill.estimatedTotal === null ? '' : `/${backfill.estimatedTotal}`;
    const err = c.state.lastErrorCode ? ` (${c.state.lastErrorCode})` : '';
    return `${labels.get(c.id) ?? c.provider} ${status} ${backfill.seen}${total} lag ${lag.events}${err}`;
  });
  return `   ${secs(Date.now() - t0).padStart(6)}  ${parts.join(' | ')} | writes pending ${s.pending}, sent ${s.sent}${
    s.failed ? `, failed ${s.failed}` : ''
  }${s.deadLetters ? ` | dead letters ${s.deadLetters}` : ''}`;
}

/**
 * Polls until the connections are live with no lag, every finished backfill is reconciled,
 * nothing waits in the outbox, and the log has stopped growing, held for three polls, and
 * `also` holds (or the engine has been quiet for `alsoGraceMs` without it: the report then
 * shows what is off). On the deadline: says what did not converge and throws.
 */
/** Which addresses differ between the two CRMs, and which one holds twice: what to look into when the counts differ. */
async function contactsDiff(
  emu: ReturnType<typeof emulatorClient>,
  portalA: number,
  portalB: number,
): Promise<string> {
  const emails = async (portal: number) =>
    (await emu.hubspot.objects(portal, 'contacts')).map((c) => {
      const p = c.properties;
      const who = [p.firstname, p.lastname, p.phone].filter(Boolean).join(' ');
      return p.email ? String(p.email).toLowerCase() : `(no address: ${who || 'nothing but an id'})`;
    });
  const [inA, inB] = [await emails(portalA), await emails(portalB)];
  const twice = (list: string[]) => list.filter((e, i) => list.indexOf(e) !== i);
  const missing = (from: string[], to: string[]) => from.filter((e) => !to.includes(e));
  return [
    `       only in CRM A: ${missing(inA, inB).join(', ') || 'none'}; only in CRM B: ${missing(inB, inA).join(', ') || 'none'}`,
    `       twice in CRM A: ${twice(inA).join(', ') || 'none'}; twice in CRM B: ${twice(inB).join(', ') || 'none'}`,
  ].join('\n');
}

async function waitUntilSettled(
  what: string,
  api: Api,
  pool: Pool,
  labels: Map<string, string>,
  also: () => Promise<boolean> = async () => true,
  alsoGraceMs = 20_000,
): Promise<Snapshot> {
  const t0 = Date.now();
  const tty = process.stdout.isTTY === true;
  let calm = 0;
  let quietSince: number | undefined;
  let lastEvents = -1;
  let last: Snapshot | undefined;
  let lastPrinted = '';
  let lastPrintedAt = 0;
  let lastLag = -1;
  let lagSince = Date.now();
  let stallNoted = false;
  for (;;) {
    for (const p of procs)
      if (!running(p)) throw new DemoFailure(`${p.name} is not running any more\n${tailOf(p)}`);
    try {
      last = await snapshot(api, pool);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(1_000);
      continue;
    }
    const line = progressLine(last, labels, t0);
    const lag = last.connections.reduce((n, c) => n + c.state.lag.events, 0);
    if (lag !== lastLag) [lastLag, lagSince, stallNoted] = [lag, Date.now(), false];
    else if (lag > 0 && !stallNoted && Date.now() - lagSince > 20_000) {
      stallNoted = true;
      if (tty) process.stdout.write('\n');
      say(`   … the merge has consumed nothing for 20 s (${lag} events waiting); still waiting`);
    }
    const quiet = settled(last) && last.events === lastEvents;
    lastEvents = last.events;
    quietSince = quiet ? (quietSince ?? Date.now()) : undefined;
    const graceOver = quietSince !== undefined && Date.now() - quietSince > alsoGraceMs;
    calm = quiet && (graceOver || (await also())) ? calm + 1 : 0;
    if (tty) process.stdout.write(`\r\x1b[2K${line}`);
    else if (line.slice(10) !== lastPrinted || Date.now() - lastPrintedAt > 10_000 || calm >= 3) {
      say(line);
      lastPrinted = line.slice(10);
      lastPrintedAt = Date.now();
    }
    if (calm >= 3) {
      if (tty) process.stdout.write('\n');
      say(`   ${what}: settled in ${secs(Date.now() - t0)}${graceOver ? ' (but see the checks below)' : ''}`);
      return last;
    }
    if (Date.now() > deadline) {
      if (tty) process.stdout.write('\n');
      await explainTimeout(what, last, pool, labels);
      throw new DemoFailure(`${what}: no convergence before the demo's deadline (DEMO_TIMEOUT_MS)`);
    }
    await sleep(1_000);
  }
}

async function explainTimeout(what: string, s: Snapshot, pool: Pool, labels: Map<string, string>) {
  const label = (id: string | null) => (id ? (labels.get(id) ?? id) : '—');
  say(`\n✘ ${what} did not converge within the demo's time limit. Where it stands:`);
  for (const c of s.connections) {
    const st = c.state;
    const ok = st.status === 'live' && st.lag.events === 0;
    say(
      `   ${ok ? '✔' : '✘'} ${label(c.id)}: ${st.status}${st.reason ? ` (${st.reason})` : ''}, backfill ${st.backfill.seen}/${
        st.backfill.estimatedTotal ?? '?'
      }, lag ${st.lag.events} events${st.lastErrorCode ? `, last error ${st.lastErrorCode}` : ''}`,
    );
  }
  const { rows: unreconciled } = await pool.query<{ id: string }>(
    'SELECT id FROM connection WHERE reconciled_at IS NULL',
  );
  if (unreconciled.length) say(`   not reconciled yet: ${unreconciled.map((r) => label(r.id)).join(', ')}`);
  const { rows: outbox } = await pool.query<{
    connection_id: string;
    status: string;
    n: number;
    err: string | null;
  }>(
    `SELECT connection_id, status, count(*)::int AS n, max(last_error) AS err FROM outbox
      WHERE status IN ('pending', 'sending', 'failed') GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  for (const r of outbox)
    say(
      `   outbox → ${label(r.connection_id)}: ${r.n} ${r.status}${r.err ? ` (last error: ${r.err.slice(0, 160)})` : ''}`,
    );
  const { rows: dead } = await pool.query<{ source: string; error_code: string; msg: string; n: number }>(
    `SELECT source, error_code, min(error_message) AS msg, count(*)::int AS n FROM dead_letter
      WHERE status = 'open' GROUP BY 1, 2 ORDER BY n DESC LIMIT 10`,
  );
  for (const r of dead) say(`   dead letters: ${r.n} × ${r.source} ${r.error_code}: ${r.msg.slice(0, 200)}`);
  const { rows: behind } = await pool.query<{ partition: number; head: string; committed: string | null }>(
    `SELECT p.partition, p.next_offset - 1 AS head, o.committed_offset AS committed FROM log_partition p
       LEFT JOIN consumer_offset o ON o.group_name = 'sync' AND o.partition = p.partition
      WHERE p.next_offset - 1 > COALESCE(o.committed_offset, 0) ORDER BY p.partition`,
  );
  if (behind.length)
    say(
      `   sync group behind on partitions: ${behind.map((r) => `${r.partition} (committed ${r.committed ?? 0}, head ${r.head})`).join(', ')}`,
    );
  const { rows: busy } = await pool.query<{
    state: string;
    wait: string | null;
    secs: number;
    query: string;
  }>(
    `SELECT state, wait_event_type || ':' || wait_event AS wait,
            extract(epoch FROM now() - xact_start)::int AS secs, left(query, 100) AS query
       FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
  );
  for (const r of busy)
    say(
      `   session ${r.state} ${r.secs ?? 0} s${r.wait ? ` (${r.wait})` : ''}: ${r.query.replace(/\s+/g, ' ')}`,
    );
  say(`   the processes' output: ${relative(root, logDir)}/<name>.log`);
}

// ---------------------------------------------------------------------------------------
// 8. What to look at

function showValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 70 ? `${text.slice(0, 67)}…` : text;
}

function printRecord(record: RecordView, labels: Map<string, string>) {
  const source = (ref: { kind: string; id: string }) =>
    ref.kind === 'connection' ? (labels.get(ref.id) ?? ref.id) : `user ${ref.id}`;
  say(`   ${record.displayName ?? '(no name)'}  ·  ${record.type} ${record.id}`);
  const width = Math.max(...Object.keys(record.fields).map((f) => f.length), 5);
  for (const [field, value] of Object.entries(record.fields)) {
    const p = record.provenance[field];
    const from = p ? `  ← ${source(p.source)}, ${p.eventTime}${p.conflicted ? ', conflicted' : ''}` : '';
    say(`     ${field.padEnd(width)}  ${showValue(value).padEnd(42)}${from}`);
  }
  say(
    `     source links: ${record.sourceLinks.map((l) => `${labels.get(l.connectionId) ?? l.provider} #${l.externalId}`).join(', ')}`,
  );
  if (record.openConflicts.length) say(`     open conflicts: ${record.openConflicts.length}`);
}

async function countPages(api: Api, resource: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: { data: unknown[]; nextCursor: string | null } = await api(
      'GET',
      `/api/v1/${resource}?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
    );
    count += page.data.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  say('Syncline demo: two CRMs, a calendar, a mailbox and a task list kept in one view, two-way.');
  say(
    `Child processes log to ${relative(root, logDir)}/<name>.log.${exitAfterReport ? '' : ' Ctrl-C stops.'}`,
  );

  step(1, 'PostgreSQL and Redis');
  await ensureServices();

  step(2, 'A fresh syncline_demo database, migrated; a clean Redis prefix');
  const admin = new Client({ connectionString: `${pgServer}/postgres` });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS syncline_demo WITH (FORCE)');
  await admin.end();
  await ensureDatabase(databaseUrl);
  const report = await migrate(databaseUrl);
  say(`   ${databaseUrl}: ${report.applied.length} migrations applied`);
  const removed = await clearRedisPrefix();
  say(`   Redis ${redisUrl}, key prefix "${REDIS_PREFIX}:" (${removed} old keys removed)`);

  step(3, 'The emulators, the API and the workers, as child processes');
  const [hubspotPort, googlePort] = [await pickPort(4010), await pickPort(4020)];
  let smtpPort = await pickPort(4025);
  if (smtpPort === hubspotPort || smtpPort === googlePort) smtpPort = await freePort();
  let microsoftPort = await pickPort(4030);
  if ([hubspotPort, googlePort, smtpPort].includes(microsoftPort)) microsoftPort = await freePort();
  const emulators = start('emulators', 'emulators', {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    EMULATOR_HOST: '127.0.0.1',
    EMULATOR_HUBSPOT_PORT: String(hubspotPort),
    EMULATOR_GOOGLE_PORT: String(googlePort === hubspotPort ? await freePort() : googlePort),
    EMULATOR_SMTP_PORT: String(smtpPort),
    EMULATOR_MICROSOFT_PORT: String(microsoftPort),
    EMULATOR_SEED: '1',
  });
  let urls: EmulatorUrls | undefined;
  await ready(emulators, 'the {hubspot, google} line and the control API', async () => {
    urls ??= emulatorUrlsFrom(emulators.tail);
    return urls !== undefined && (await emulatorsReady(urls));
  });
  const emulatorUrls = urls!;
  const emu = emulatorClient(emulatorUrls);
  const googleClient = await emu.google.oauthClient();
  // The Microsoft emulator's own app: any local redirect URI is its (the API's OAuth callback).
  const microsoftClient = await emu.microsoft?.oauthClient();
  if (!microsoftClient) throw new DemoFailure('the emulators printed no Microsoft 365 URL');
  say(
    `   emulators: HubSpot ${emulatorUrls.hubspot}, Google ${emulatorUrls.google} (also the OpenID provider), mail ${emulatorUrls.smtp ?? '(none)'}`,
  );

  const apiPort = await pickPort(Number(process.env.DEMO_PORT ?? 3000));
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  let metricsPort = await pickPort(9464);
  if (metricsPort === apiPort) metricsPort = await freePort();
  let apiMetricsPort = await pickPort(9465);
  if (apiMetricsPort === apiPort || apiMetricsPort === metricsPort) apiMetricsPort = await freePort();
  const gmailPushToken = randomBytes(16).toString('hex');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // The Microsoft emulator's authority (scripts/demo.sh made it and named it for this process).
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX,
    LOG_LEVEL: process.env.DEMO_LOG_LEVEL ?? 'warn',
    SYNCLINE_ENCRYPTION_KEYS: demoKey(),
    // Insight properties reach the CRMs at most every 5 s here (30 s by default), so the demo
    // can show the latest ones in both portals before it ends.
    INSIGHT_WRITE_PERIOD_MS: process.env.INSIGHT_WRITE_PERIOD_MS ?? '5000',
    ...providerSettings({
      emulators: emulatorUrls,
      hubspotApp: DEMO_HUBSPOT_APP,
      googleClient,
      microsoftClient,
      gmailPushToken,
      apiUrl,
      pullIntervalMs: PULL_INTERVAL_MS,
    }),
  };
  const api = start('api', 'api', {
    ...env,
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    API_METRICS_PORT: String(apiMetricsPort),
  });
  const workers = start('workers', 'workers', { ...env, METRICS_PORT: String(metricsPort) });
  const workspaceRun = runScript(
    'apps/sync-api/src/cli.ts',
    [
      'create-workspace',
      '--name',
      'Brightwave',
      '--admin-email',
      DEMO_ADMIN.email,
      '--admin-name',
      DEMO_ADMIN.name,
    ],
    env,
  );
  await Promise.all([
    ready(api, `GET ${apiUrl}/readyz`, () => httpOk(`${apiUrl}/readyz`)),
    ready(
      workers,
      `GET http://127.0.0.1:${metricsPort}/metrics`,
      async () =>
        workers.tail.some((l) => l.includes('workers started')) ||
        (await httpOk(`http://127.0.0.1:${metricsPort}/metrics`)),
    ),
  ]);
  say(`   API ${apiUrl} (pid ${api.child.pid}), workers (pid ${workers.child.pid}, metrics :${metricsPort})`);

  step(4, 'A workspace and its admin API key (the CLI prints the key once)');
  const cli = await workspaceRun;
  if (cli.code !== 0)
    throw new DemoFailure(`create-workspace exited ${cli.code}: ${cli.stderr || cli.stdout}`);
  const workspace = JSON.parse(cli.stdout.trim().split('\n').pop() ?? '') as {
    workspaceId: string;
    apiKey: string;
  };
  say(`   workspace ${workspace.workspaceId}, first admin ${DEMO_ADMIN.name} <${DEMO_ADMIN.email}>`);
  const call = apiClient(apiUrl, workspace.apiKey);
  // The salesperson whose inbox, calendar and tasks the world holds: a member who signs in as herself.
  await call('POST', '/api/v1/members', { email: DEMO_SALES.email, name: DEMO_SALES.name, role: 'sales' });
  say(`   member ${DEMO_SALES.name} <${DEMO_SALES.email}> invited as sales`);

  step(5, `The salesperson's world in the emulators (${people} people)`);
  const hubspotWebhook = `${apiUrl}/webhooks/hubspot`;
  const seedStarted = Date.now();
  const world: DemoWorld = await seedDemoWorld(emulatorUrls, {
    people,
    app: DEMO_HUBSPOT_APP,
    conflicts: 'deferred',
    webhookUrls: { a: hubspotWebhook, b: hubspotWebhook },
    gmailPushUrl: `${apiUrl}/webhooks/gmail?token=${gmailPushToken}`,
    sparePortal: { webhookUrl: hubspotWebhook },
  });
  // A second salesperson, on Microsoft 365, in the same world: one of Dana's meetings is also his.
  const outlook: DemoOutlookUser = await seedOutlookUser(emulatorUrls, planDemoWorld({ people }), {
    app: microsoftClient,
  });
  const { a, b } = world.portals;
  const g = world.google;
  const dupes = (kind: string) => world.duplicates.filter((d) => d.kind === kind);
  say(`   seeded in ${secs(Date.now() - seedStarted)}`);
  say(
    `   CRM A (portal ${a.portalId}): ${a.counts.contacts} contacts, ${a.counts.companies} companies, ${a.counts.deals} deals, ${a.counts.meetings} logged meetings`,
  );
  say(
    `   CRM B (portal ${b.portalId}): ${b.counts.contacts} contacts, ${b.counts.companies} companies, ${b.counts.deals} deals, ${b.counts.meetings} logged meetings`,
  );
  if (world.spare)
    say(
      `   CRM C (portal ${world.spare.portalId}): ${world.spare.counts.contacts} contacts (${world.spare.counts.alsoInAOrB} also in A or B, ${world.spare.counts.otherJobTitle} of them with another job title; ${world.spare.counts.own} of its own), not connected: for the admin to connect`,
    );
  say(
    `   ${world.counts.inBoth} of ${world.counts.people} people are in both CRMs, written differently (${dupes('contact').filter((d) => d.matchBy === 'email').length} by email case/format, ${dupes('contact').filter((d) => d.matchBy === 'phone').length} with another address and only the phone in common)`,
  );
  say(
    `   Google ${g.email}: ${g.counts.events} meetings, ${g.counts.messages} messages in ${g.counts.threads} threads, ${g.counts.tasks} tasks`,
  );
  for (const line of describeOutlookUser(outlook)) say(`   ${line}`);
  say(
    `   planted: ${world.duplicates.length} duplicates, ${world.conflicts.length} conflicting edits (made after the backfill)`,
  );
  say(`   webhooks → ${hubspotWebhook}; Gmail push → ${apiUrl}/webhooks/gmail?token=…`);

  step(6, 'Connecting the eight accounts through the API');
  const labels = new Map<string, string>();
  const connectionOf: Partial<Record<DemoSystem, string>> = {};
  const connect = async (
    system: DemoSystem,
    provider: string,
    account: string,
    credentials: object,
    name: string,
  ) => {
    const c = await call<ConnectionView>('POST', '/api/v1/connections', {
      provider,
      externalAccountId: account,
      displayName: name,
      credentials,
    });
    labels.set(c.id, name);
    connectionOf[system] = c.id;
    say(`   POST /api/v1/connections ${provider.padEnd(15)} ${account.padEnd(26)} → ${c.id} (${c.status})`);
  };
  await connect('hubspot-a', 'hubspot', a.externalAccountId, a.credentials, 'CRM A');
  await connect('hubspot-b', 'hubspot', b.externalAccountId, b.credentials, 'CRM B');
  await connect('google-calendar', 'google-calendar', g.externalAccountId, g.credentials, 'Calendar');
  await connect('gmail', 'gmail', g.externalAccountId, g.credentials, 'Gmail');
  await connect('google-tasks', 'google-tasks', g.externalAccountId, g.credentials, 'Tasks');
  for (const [provider, name] of [
    ['microsoft-calendar', 'Outlook Calendar'],
    ['microsoft-mail', 'Outlook Mail'],
    ['microsoft-todo', 'To Do'],
  ] as const)
    await connect(provider, provider, outlook.externalAccountId, outlook.credentials, name);

  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  try {
    step(7, 'Backfill, identity, merge and writeback (per connection: status, records seen, lag)');
    await waitUntilSettled('backfill and writeback', call, pool, labels);
    const contactsAfterBackfill = {
      a: (await emu.hubspot.objects(a.portalId, 'contacts')).length,
      b: (await emu.hubspot.objects(b.portalId, 'contacts')).length,
    };

    say('\n   The planted conflicting edits, now, in both CRMs:');
    const { rows: clock } = await pool.query<{ now: Date }>('SELECT now()');
    const conflictsFrom = clock[0]!.now;
    await world.applyConflicts();
    for (const c of world.conflicts) say(`   - ${c.description}`);
    const valueIn = async (
      system: 'hubspot-a' | 'hubspot-b',
      type: 'contacts' | 'deals',
      id: string,
      field: string,
    ) => {
      const portal = system === 'hubspot-a' ? a : b;
      const records = await emu.hubspot.objects(portal.portalId, type);
      return records.find((r) => r.id === id)?.properties[field] ?? null;
    };
    const conflictState = async () =>
      Promise.all(
        world.conflicts.map(async (c) => {
          const type = c.kind === 'deal-stage' ? 'deals' : 'contacts';
          const values = await Promise.all(
            c.edits.map((e) => valueIn(e.system as 'hubspot-a', type, e.id, c.field)),
          );
          const latest = c.edits.at(-1)!.value;
          return { conflict: c, values, agreed: values.every((v) => v === values[0]), latest };
        }),
      );
    await waitUntilSettled('the conflicting edits', call, pool, labels, async () =>
      (await conflictState()).every((s) => s.agreed),
    );

    step(8, 'What to look at');
    let failures = 0;
    const check = (ok: boolean) => {
      if (!ok) failures++;
      return ok ? '✔' : '✘';
    };
    const [contactsA, contactsB] = [
      (await emu.hubspot.objects(a.portalId, 'contacts')).length,
      (await emu.hubspot.objects(b.portalId, 'contacts')).length,
    ];
    const unifiedPeople = await countPages(call, 'people');
    const { rows: byType } = await pool.query<{ entity_type: string; n: number }>(
      `SELECT entity_type, count(*)::int AS n FROM entity WHERE merged_into IS NULL GROUP BY 1 ORDER BY 1`,
    );
    const linkOf = async (system: DemoSystem, externalId: string) =>
      (
        await pool.query<{ entity_id: string }>(
          'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
          [connectionOf[system], externalId],
        )
      ).rows[0]?.entity_id;
    const recognised = async (kind: string, matchBy?: string) => {
      const list = dupes(kind).filter((d) => !matchBy || d.matchBy === matchBy);
      let same = 0;
      for (const d of list) {
        const ids = await Promise.all(d.records.map((r) => linkOf(r.system, r.id)));
        if (ids[0] && ids.every((id) => id === ids[0])) same++;
      }
      return { same, of: list.length };
    };
    const byEmail = await recognised('contact', 'email');
    const byPhone = await recognised('contact', 'phone');
    const companies = await recognised('company');
    const deals = await recognised('deal');
    const meetings = await recognised('meeting');
    const { rows: possible } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM possible_duplicate WHERE status = 'open'`,
    );
    // The review queue against the world's truth: how many of its pairs are one person, overall
    // and among the first ten a person would read (the API's order, by priority).
    const truthOf = new Map<string, string>();
    for (const [system, portal] of [
      ['hubspot-a', a],
      ['hubspot-b', b],
    ] as const)
      for (const [person, id] of Object.entries(portal.ids.contacts))
        truthOf.set(`${connectionOf[system]}|${id}`, person);
    const queue = await call<{
      data: { a: { sourceLinks: SourceLinkView[] }; b: { sourceLinks: SourceLinkView[] } }[];
    }>('GET', '/api/v1/possible-duplicates?entityType=person&status=open&limit=200');
    const peopleOf = (links: SourceLinkView[]) =>
      new Set(links.flatMap((l) => truthOf.get(`${l.connectionId}|${l.externalId}`) ?? []));
    const samePerson = queue.data.map((pair) => {
      const [x, y] = [peopleOf(pair.a.sourceLinks), peopleOf(pair.b.sourceLinks)];
      return [...x].some((p) => y.has(p));
    });
    const share = (list: boolean[]) =>
      list.length === 0 ? 'none' : `${list.filter(Boolean).length}/${list.length}`;

    say('\n   Counts');
    say(
      `     contacts in CRM A: ${a.counts.contacts} seeded → ${contactsAfterBackfill.a} after the backfill → ${contactsA} now`,
    );
    say(
      `     contacts in CRM B: ${b.counts.contacts} seeded → ${contactsAfterBackfill.b} after the backfill → ${contactsB} now`,
    );
    say(
      `     ${check(contactsA === contactsB)} both CRMs hold the same people (everyone known to either CRM is now in both)`,
    );
    if (contactsA !== contactsB) say(await contactsDiff(emu, a.portalId, b.portalId));
    const [dealsA, dealsB] = [
      (await emu.hubspot.objects(a.portalId, 'deals')).length,
      (await emu.hubspot.objects(b.portalId, 'deals')).length,
    ];
    say(
      `     deals: CRM A ${a.counts.deals} seeded → ${dealsA} now, CRM B ${b.counts.deals} → ${dealsB}; ${world.counts.deals} distinct deals were planted (${dupes('deal').length} of them in both CRMs)`,
    );
    say(
      `     ${check(dealsA === world.counts.deals && dealsB === world.counts.deals)} each CRM holds every deal once`,
    );
    say(`     unified people (GET /api/v1/people, all pages): ${unifiedPeople}`);
    say(`     unified records by type: ${byType.map((r) => `${r.entity_type} ${r.n}`).join(', ')}`);
    say(`     planted duplicates recognised as one record:`);
    say(
      `       ${check(byEmail.same === byEmail.of)} people, same address written differently: ${byEmail.same}/${byEmail.of}`,
    );
    say(
      `       ${byPhone.same === byPhone.of ? '✔' : '·'} people, different address, same name and phone: ${byPhone.same}/${byPhone.of}`,
    );
    say(
      `       ${companies.same === companies.of ? '✔' : '·'} companies by domain: ${companies.same}/${companies.of}`,
    );
    say(`       ${deals.same === deals.of ? '✔' : '·'} deals in both CRMs: ${deals.same}/${deals.of}`);
    say(
      `       ${meetings.same === meetings.of ? '✔' : '·'} calendar events also logged in a CRM: ${meetings.same}/${meetings.of}`,
    );
    say(`     possible duplicates waiting for review (never merged silently): ${possible[0]!.n}`);
    say(
      `       of the people's pairs, one person in truth: ${share(samePerson)}; among the first ten by priority: ${share(samePerson.slice(0, 10))} (the world's namesakes are different people)`,
    );

    say(`\n   From Outlook (${outlook.displayName}, Microsoft 365)`);
    // Each Outlook item's unified record, and how many of them a CRM holds too (the people an
    // item names are records of their own, left out here).
    const fromOutlook = async (system: DemoSystem, entityType: string) => {
      const { rows } = await pool.query<{ linked: number; in_crm: number }>(
        `SELECT count(DISTINCT l.entity_id)::int AS linked,
                count(DISTINCT l.entity_id) FILTER (WHERE EXISTS (
                  SELECT 1 FROM source_link h JOIN connection c ON c.id = h.connection_id
                   WHERE h.entity_id = l.entity_id AND c.provider = 'hubspot'))::int AS in_crm
           FROM source_link l WHERE l.connection_id = $1 AND l.entity_type = $2`,
        [connectionOf[system], entityType],
      );
      return rows[0] ?? { linked: 0, in_crm: 0 };
    };
    for (const [system, entityType, what, seeded] of [
      ['microsoft-calendar', 'meeting', 'meetings', outlook.counts.events],
      ['microsoft-mail', 'email_activity', 'mails', outlook.counts.messages],
      ['microsoft-todo', 'task', 'To Do tasks', outlook.counts.tasks],
    ] as const) {
      const { linked, in_crm } = await fromOutlook(system, entityType);
      say(
        `     ${check(linked === seeded)} ${what}: ${seeded} in Outlook → ${linked} unified records, ${in_crm} of them also in a CRM`,
      );
    }
    const shared = outlook.sharedMeeting;
    const [inGoogle, inOutlook] = await Promise.all([
      linkOf('google-calendar', shared.googleEventId),
      linkOf('microsoft-calendar', shared.outlookEventId),
    ]);
    say(
      `     ${check(inGoogle !== undefined && inGoogle === inOutlook)} "${shared.subject}", in Dana's Google Calendar and Marco's Outlook, is one meeting (by its iCalendar UID)`,
    );
    if (outlook.sharedMessage?.gmailMessageId) {
      const [gmail, mail] = await Promise.all([
        linkOf('gmail', outlook.sharedMessage.gmailMessageId),
        linkOf('microsoft-mail', outlook.sharedMessage.outlookMessageId),
      ]);
      say(
        `     ${check(gmail !== undefined && gmail === mail)} a mail both received, ${outlook.sharedMessage.internetMessageId}, is one email activity (by its Message-ID)`,
      );
    }

    // The person the most mails and meetings count for, as a salesperson opens them.
    const { rows: busiest } = await pool.query<{ id: string; name: string | null }>(
      `SELECT c.entity_id AS id, e.display_name AS name FROM activity_contribution c
         JOIN entity e ON e.id = c.entity_id AND e.entity_type = 'person' AND e.merged_into IS NULL
        GROUP BY c.entity_id, e.display_name ORDER BY count(*) DESC, c.entity_id LIMIT 1`,
    );
    say('\n   Activity insights, in event time (GET /api/v1/people/{id}/insights)');
    if (busiest[0]) {
      const insight = await call<{
        lastContactedAt: string | null;
        lastContactedVia: string | null;
        nextMeetingAt: string | null;
        last30: { mailsIn: number; mailsOut: number; meetings: number };
        trend: string;
        completeUpTo: string | null;
        activities: number;
        sources: { provider: string | null; activities: number }[];
      }>('GET', `/api/v1/people/${busiest[0].id}/insights`);
      const via = { mail_in: 'their mail', mail_out: 'our mail', meeting: 'a meeting' } as Record<
        string,
        string
      >;
      say(
        `     ${busiest[0].name ?? busiest[0].id}: ${insight.activities} activities from ${insight.sources.map((x) => x.provider).join(', ')}`,
      );
      say(
        `     ${check(insight.lastContactedAt !== null)} last contacted ${insight.lastContactedAt ?? 'never'}${
          insight.lastContactedVia ? ` (${via[insight.lastContactedVia] ?? insight.lastContactedVia})` : ''
        }; next meeting ${insight.nextMeetingAt ?? 'none scheduled'}`,
      );
      say(
        `     last 30 days: ${insight.last30.mailsIn} mails in, ${insight.last30.mailsOut} out, ${insight.last30.meetings} meetings; trend ${insight.trend}`,
      );
      say(
        `     ${check(insight.completeUpTo !== null)} complete up to ${insight.completeUpTo ?? '(not yet: a connection has vouched for nothing)'}: every connected mailbox, calendar and CRM has delivered everything before it`,
      );
      say(`     The same, in each CRM's Syncline properties (read-only, "Last contacted (Syncline)", …):`);
      for (const portal of [a, b]) {
        const { rows: link } = await pool.query<{ external_id: string }>(
          `SELECT l.external_id FROM source_link l JOIN connection c ON c.id = l.connection_id
            WHERE l.entity_id = $1 AND c.provider = 'hubspot' AND c.external_account_id = $2 LIMIT 1`,
          [busiest[0].id, String(portal.portalId)],
        );
        const contactId = link[0]?.external_id;
        const written = async () =>
          (await emu.hubspot.objects(portal.portalId, 'contacts')).find((c) => c.id === contactId)
            ?.properties;
        // The latest values go at most once per period: wait for them a little.
        let props = await written();
        for (let i = 0; i < 30 && props?.syncline_last_contacted !== insight.lastContactedAt; i++) {
          await new Promise((r) => setTimeout(r, 500));
          props = await written();
        }
        const same =
          contactId !== undefined &&
          Date.parse(props?.syncline_last_contacted ?? '') === Date.parse(insight.lastContactedAt ?? '') &&
          Number(props?.syncline_mails_in_30d) === insight.last30.mailsIn;
        say(
          `     ${check(same)} portal ${portal.portalId}: syncline_last_contacted ${props?.syncline_last_contacted ?? '(none)'}, syncline_next_meeting ${props?.syncline_next_meeting || '(none)'}, syncline_mails_in_30d ${props?.syncline_mails_in_30d ?? '(none)'}, syncline_engagement_trend ${props?.syncline_engagement_trend ?? '(none)'}`,
        );
      }
    } else say(`     ${check(false)} no person has any mail or meeting counted`);

    const sample = dupes('contact').find(
      (d) => d.matchBy === 'email' && !world.conflicts.some((c) => c.key === d.key),
    );
    let editTarget: { record: RecordView; idA: string; idB: string } | undefined;
    if (sample) {
      const email = sample.records[0]!.values.email!;
      say(`\n   One planted duplicate: ${sample.description}`);
      say(`   GET /api/v1/people?email=${email}`);
      const page = await call<{ data: RecordView[] }>(
        'GET',
        `/api/v1/people?email=${encodeURIComponent(email)}`,
      );
      say(`     ${check(page.data.length === 1)} ${page.data.length} record(s)`);
      if (page.data[0]) {
        printRecord(page.data[0], labels);
        editTarget = { record: page.data[0], idA: sample.records[0]!.id, idB: sample.records[1]!.id };
      }
    }

    say('\n   Conflicts settled (merge_conflict)');
    const { rows: summary } = await pool.query<{ total: number; same: number; before: number }>(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE (SELECT count(DISTINCT c->'value') FROM jsonb_array_elements(candidates) c) = 1)::int AS same,
              count(*) FILTER (WHERE created_at < $1)::int AS before
         FROM merge_conflict`,
      [conflictsFrom],
    );
    say(
      `     ${summary[0]!.total} recorded: ${summary[0]!.before} while the two CRMs were first merged (${summary[0]!.same} of all between equal values), and the planted ones:`,
    );
    const { rows: conflicts } = await pool.query<{
      display_name: string | null;
      entity_type: string;
      field: string;
      kind: string;
      policy: string;
      status: string;
      resolved_by: string | null;
      candidates: Array<{ value: unknown; source: { kind: string; id: string }; eventTime: string }>;
      resolution: { winner?: { value: unknown; source: { id: string } } } | null;
    }>(
      `SELECT e.display_name, e.entity_type, m.field, m.kind, m.policy, m.status, m.resolved_by, m.candidates, m.resolution
         FROM merge_conflict m JOIN entity e ON e.id = m.entity_id WHERE m.created_at >= $1 ORDER BY m.created_at`,
      [conflictsFrom],
    );
    if (conflicts.length === 0) say('     (none recorded after the planted edits)');
    for (const c of conflicts.slice(0, 12)) {
      say(
        `     ${c.entity_type} "${c.display_name}" · ${c.field}: ${c.kind}, policy ${c.policy}, ${c.status}${c.resolved_by ? ` by ${c.resolved_by}` : ''}`,
      );
      const winner = c.resolution?.winner;
      for (const cand of c.candidates) {
        const won =
          winner &&
          winner.source.id === cand.source.id &&
          JSON.stringify(winner.value) === JSON.stringify(cand.value);
        say(
          `       ${(labels.get(cand.source.id) ?? cand.source.id).padEnd(9)} ${showValue(cand.value).padEnd(28)} at ${cand.eventTime}${won ? '  ← winner' : ''}`,
        );
      }
    }
    if (conflicts.length > 12) say(`     … and ${conflicts.length - 12} more`);
    say('   The planted edits, as the CRMs hold them now (lww: the later edit wins everywhere)');
    for (const s of await conflictState()) {
      const ok = s.agreed && s.values[0] === s.latest;
      say(
        `     ${check(ok)} ${s.conflict.field} of ${s.conflict.key}: CRM A "${s.values[s.conflict.edits.findIndex((e) => e.system === 'hubspot-a')]}", CRM B "${s.values[s.conflict.edits.findIndex((e) => e.system === 'hubspot-b')]}" (latest edit: "${s.latest}" in ${s.conflict.latest})`,
      );
    }

    if (editTarget) {
      const { record, idA, idB } = editTarget;
      const title = `Head of Partnerships (edited ${new Date().toISOString().slice(11, 19)})`;
      say(`\n   A live edit: jobtitle of CRM A contact ${idA} → "${title}"`);
      const t0 = Date.now();
      await emu.hubspot.ui.update(a.portalId, 'contacts', idA, { jobtitle: title });
      let inB = false;
      let inApi = false;
      while (Date.now() - t0 < 60_000 && !(inB && inApi)) {
        inB ||= (await valueIn('hubspot-b', 'contacts', idB, 'jobtitle')) === title;
        inApi ||= (await call<RecordView>('GET', `/api/v1/people/${record.id}`)).fields.jobTitle === title;
        if (!(inB && inApi)) await sleep(250);
      }
      say(
        `     ${check(inB)} in CRM B (contact ${idB}) ${inB ? `after ${secs(Date.now() - t0)}` : 'not within 60 s'}`,
      );
      say(`     ${check(inApi)} in GET /api/v1/people/${record.id}`);

      say('\n   Try it yourself: make an edit in CRM A and watch it arrive in CRM B and the API');
      say(
        `     curl -X PATCH -H 'content-type: application/json' -d '{"properties":{"jobtitle":"VP Sales"}}' \\\n          ${emulatorUrls.hubspot}/_emulator/hubspot/portals/${a.portalId}/ui/contacts/${idA}`,
      );
      say(
        `     curl -s ${emulatorUrls.hubspot}/_emulator/hubspot/portals/${b.portalId}/objects/contacts | jq '.results[] | select(.id=="${idB}") | .properties.jobtitle'`,
      );
      say(
        `     curl -s -H 'Authorization: Bearer ${workspace.apiKey}' ${apiUrl}/api/v1/people/${record.id} | jq '.fields.jobTitle, .provenance.jobTitle'`,
      );
    }

    say('\n   The web app');
    say(`     open          ${apiUrl}/`);
    for (const who of [DEMO_SALES, DEMO_ADMIN]) {
      const link = await runScript('apps/sync-api/src/cli.ts', ['sign-in-link', '--email', who.email], env);
      const url = /https?:\/\/\S+/.exec(link.stdout)?.[0];
      say(
        `     ${(who === DEMO_SALES ? 'salesperson' : 'admin').padEnd(13)} ${url ?? `(sign-in-link failed: ${link.stderr.trim()})`}   (${who.name}, one use, 15 minutes)`,
      );
      if (!url) failures++;
    }
    say(
      `     or "Sign in with Google" on ${apiUrl}/sign-in as ${DEMO_SALES.email} (the Google emulator's consent page)`,
    );
    say(`     more links: npm run cli -- sign-in-link --email <address>   (DATABASE_URL=${databaseUrl})`);
    if (world.spare)
      say(
        `     as the admin: Admin → Connections → Connect → HubSpot, tick "Try in dry run first", choose account ${world.spare.portalId} (CRM C), read what it would do, then Enable`,
      );

    say('\n   Where things are');
    say(
      `     API            ${apiUrl}   (OpenAPI: ${apiUrl}/docs, metrics: http://127.0.0.1:${apiMetricsPort}/metrics)`,
    );
    say(`     admin API key  ${workspace.apiKey}   (Authorization: Bearer …)`);
    say(`     workers        metrics: http://127.0.0.1:${metricsPort}/metrics`);
    say(
      `     HubSpot emu    ${emulatorUrls.hubspot}   CRM A = portal ${a.portalId}, CRM B = portal ${b.portalId}${world.spare ? `, CRM C = portal ${world.spare.portalId} (not connected)` : ''}`,
    );
    say(`     Google emu     ${emulatorUrls.google}   user ${g.email}`);
    say(`     database       ${databaseUrl}   (Redis prefix ${REDIS_PREFIX}:)`);
    say(`     logs           ${relative(root, logDir)}/{emulators,api,workers}.log`);
    say(
      `     e.g. curl -s -H 'Authorization: Bearer ${workspace.apiKey}' '${apiUrl}/api/v1/people?limit=5' | jq`,
    );
    say(
      `     review   curl -s -H 'Authorization: Bearer ${workspace.apiKey}' '${apiUrl}/api/v1/possible-duplicates?entityType=person' | jq '.data[0] | {id, score, evidence}'`,
    );
    say(
      `     history  curl -s -H 'Authorization: Bearer ${workspace.apiKey}' '${apiUrl}/api/v1/people/${editTarget?.record.id ?? '<id>'}/history' | jq '.data[:3]'`,
    );

    if (failures) say(`\n✘ ${failures} check(s) above failed.`);
    say(`\nThe demo took ${elapsed()} to get here.`);
    if (exitAfterReport) {
      process.exitCode = failures ? 1 : 0;
      return;
    }

    say('Everything keeps running and syncing: edit in the emulators and watch. Ctrl-C stops.');
    await new Promise<void>((done) => {
      stopRequested = done;
      for (const p of procs) p.child.once('exit', () => !p.stopping && done());
    });
    say('\nStopping the workers, the API and the emulators…');
  } finally {
    await pool.end().catch(() => {});
  }
}

main()
  .catch((error: unknown) => {
    console.error(
      `\n✘ ${error instanceof DemoFailure ? error.message : error instanceof Error ? error.stack : error}`,
    );
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    process.exit();
  });
