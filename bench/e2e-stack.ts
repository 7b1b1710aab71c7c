import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { freePort, REPO_ROOT, runScript } from '../apps/sync-api/src/testing/processes';
import { type EmulatorClient, emulatorClient, type HubspotPortalGrant } from '../e2e/support/emulator-client';
import {
  emulatorsReady,
  emulatorUrlsFrom,
  httpOk,
  providerSettings,
  spawnEntry,
} from '../e2e/support/launch';
import { type CpuSeconds, cpuSeconds } from './cpu-accounting';
import { freshBenchDatabase, freshRedisPrefix, log } from './support';

/** The whole system as processes (emulators, API, workers) for the end-to-end benches. */
export interface Stack {
  emu: EmulatorClient;
  apiUrl: string;
  apiKey: string;
  pool: Pool;
  /** A portal with our app installed, webhooks to our API, the emulator's limits off. */
  portal(portalId: number): Promise<HubspotPortalGrant>;
  connect(portalId: number, grant: HubspotPortalGrant): Promise<string>;
  /** A one-time sign-in link to the web app for the workspace's admin (the CLI's `sign-in-link`). */
  signInLink(): Promise<string>;
  /** CPU seconds used so far by each process of the stack, PostgreSQL, Redis and the bench. */
  cpu(): CpuSeconds;
  stop(): Promise<void>;
}

/** The workspace's first admin, who may sign in to the web app (`stack.signInLink()`). */
export const STACK_ADMIN_EMAIL = 'bench.admin@syncline.test';

const APP = { appId: 7001, clientId: 'syncline-bench-client', clientSecret: 'syncline-bench-secret' };
const PREFIX = 'syncline-bench-e2e';

/**
 * `workers`: how many worker processes share the work (the sync stage's partitions are leased
 * among them, pushes and pulls are queue jobs any of them takes); one unless asked.
 */
export async function startStack(options: { coalesceMs?: number; workers?: number } = {}): Promise<Stack> {
  const databaseUrl = await freshBenchDatabase('syncline_bench_e2e');
  const redisUrl = await freshRedisPrefix(PREFIX);

  // In start order (emulators, API, workers): stopped in reverse.
  const roles: Record<string, ChildProcess[]> = { emulators: [], api: [], workers: [] };
  const children = () => Object.values(roles).flat();
  const tail: string[] = [];
  // BENCH_PROFILE_DIR=/some/dir: every process of the stack writes a V8 CPU profile there
  // when the bench ends (they are stopped with SIGTERM then, instead of SIGKILL).
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profiling: NodeJS.ProcessEnv = profileDir
    ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` }
    : {};
  const spawnOf = (kind: 'emulators' | 'api' | 'workers', env: NodeJS.ProcessEnv) => {
    const child = spawnEntry(kind, {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...profiling, ...env },
      onLine: (line) => {
        tail.push(line);
        if (tail.length > 200) tail.shift();
      },
    });
    roles[kind]!.push(child);
    return child;
  };
  const until = async (what: string, probe: () => Promise<boolean>) => {
    const deadline = Date.now() + 60_000;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`${what} not ready:\n${tail.slice(-30).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  // Children die with the bench, whatever way it ends.
  process.once('exit', () => {
    for (const child of children()) child.kill('SIGKILL');
  });
  spawnOf('emulators', { EMULATOR_HUBSPOT_PORT: '0', EMULATOR_GOOGLE_PORT: '0', LOG_LEVEL: 'warn' });
  await until('emulators', async () => {
    const urls = emulatorUrlsFrom(tail);
    return urls !== undefined && (await emulatorsReady(urls));
  });
  const urls = emulatorUrlsFrom(tail)!;
  const emu = emulatorClient(urls);
  const apiUrl = `http://127.0.0.1:${await freePort()}`;
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    SYNCLINE_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    METRICS_PORT: '0',
    // The emulator's limits are off for the throughput run; ours follow.
    HUBSPOT_REQUESTS_PER_10S: '100000',
    // The sync stage's settings (SYNC_BATCH_SIZE, SYNC_COALESCE_MS, …, LOG_PARTITIONS, TABLE_STATS_INTERVAL_MS) as the bench is run with.
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => k.startsWith('SYNC_') || k === 'LOG_PARTITIONS' || k === 'TABLE_STATS_INTERVAL_MS',
      ),
    ),
    ...providerSettings({
      emulators: urls,
      hubspotApp: APP,
      googleClient: await emu.google.oauthClient(),
      gmailPushToken: randomBytes(8).toString('hex'),
      apiUrl,
      pullIntervalMs: 5_000,
      ...(options.coalesceMs === undefined ? {} : { coalesceMs: options.coalesceMs }),
    }),
  };
  spawnOf('api', { ...env, HOST: '127.0.0.1', PORT: new URL(apiUrl).port });
  for (let n = 0; n < (options.workers ?? 1); n++) spawnOf('workers', env);
  const cli = await runScript(
    'apps/sync-api/src/cli.ts',
    ['create-workspace', '--name', 'Bench', '--admin-email', STACK_ADMIN_EMAIL],
    env,
  );
  if (cli.code !== 0) throw new Error(`create-workspace: ${cli.stderr}`);
  const { apiKey } = JSON.parse(cli.stdout.trim().split('\n').pop() ?? '{}') as { apiKey: string };
  await until('api', () => httpOk(`${apiUrl}/readyz`));
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  // The workers are up once their sync consumer has registered its partitions.
  await until('workers', async () => {
    const { rows } = await pool.query(`SELECT 1 FROM consumer_offset WHERE group_name = 'sync' LIMIT 1`);
    return rows.length > 0;
  });
  log(`stack up: api ${apiUrl}, emulators ${urls.hubspot}`);

  return {
    emu,
    apiUrl,
    apiKey,
    pool,
    portal: (portalId) =>
      emu.hubspot.createPortal({
        portalId,
        ...APP,
        webhookUrl: `${apiUrl}/webhooks/hubspot`,
        limits: { per10s: 1_000_000, searchPerSecond: 100_000 },
        webhookTiming: { batchDelayMs: 10, maxBatchSize: 100 },
      }),
    connect: async (portalId, grant) => {
      const res = await fetch(`${apiUrl}/api/v1/connections`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          provider: 'hubspot',
          externalAccountId: String(portalId),
          credentials: {
            accessToken: grant.accessToken,
            refreshToken: grant.refreshToken,
            expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
          },
        }),
      });
      if (res.status !== 201) throw new Error(`connect ${portalId}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    },
    signInLink: async () => {
      const out = await runScript(
        'apps/sync-api/src/cli.ts',
        ['sign-in-link', '--email', STACK_ADMIN_EMAIL],
        env,
      );
      const link = /https?:\/\/\S+/.exec(out.stdout)?.[0];
      if (out.code !== 0 || !link) throw new Error(`sign-in-link: ${out.code} ${out.stderr || out.stdout}`);
      return link;
    },
    cpu: () =>
      cpuSeconds(Object.fromEntries(Object.entries(roles).map(([k, cs]) => [k, cs.map((c) => c.pid)]))),
    stop: async () => {
      await pool.end();
      if (profileDir) {
        for (const child of children()) child.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 5_000));
      }
      for (const child of children().reverse()) child.kill('SIGKILL');
    },
  };
}

/** Polls until `probe` is true; returns the time it became so, or undefined after `timeoutMs`. */
export async function waitUntil(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return Date.now();
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Runs `count` tasks with at most `limit` in flight. */
export async function pooled(
  count: number,
  limit: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await task(next++);
  });
  await Promise.all(lanes);
}
