import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ProviderKey } from '@syncline/core';
import { Redis } from 'ioredis';
import { Pool, type QueryResultRow } from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { freePort, REPO_ROOT, runScript } from '../../apps/sync-api/src/testing/processes';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../test/support/env';
import {
  type CreatePortalInput,
  type EmulatorUrls,
  emulatorClient,
  type HubspotPortalGrant,
} from './emulator-client';
import {
  ENTRY,
  emulatorsReady,
  emulatorUrlsFrom,
  httpOk,
  type ProcessKind,
  providerSettings,
  spawnEntry,
} from './launch';
import { waitFor } from './wait';

export { isWrite } from './emulator-client';
export { sleep, type WaitForOptions, WaitTimeoutError, waitFor } from './wait';

// The whole system as a user runs it: the emulators, the API and the workers as real
// processes (`node -r @swc-node/register <entry>`, like the npm scripts), on a private
// migrated database and a private Redis key prefix.

export { ENTRY, type ProcessKind };

/** Our HubSpot app as the system is configured with it; portals made through the harness install it. */
export const E2E_HUBSPOT_APP = Object.freeze({
  appId: 5001,
  clientId: 'syncline-e2e-hubspot-client',
  clientSecret: 'syncline-e2e-hubspot-secret',
});

const VERBOSE = process.env.SYNCLINE_E2E_VERBOSE === '1';
const MAX_LINES = 20_000;

export interface StartSystemOptions {
  /** Names the database and the Redis prefix. Default `system`. */
  label?: string;
  /** Workers processes started with the system (`workers`, then `workers-2`, …). Default 1. */
  workers?: number;
  /** Default 500. */
  pullIntervalMs?: number;
  /** Default 50. */
  coalesceMs?: number;
  /** Default `info`; readiness of the workers is read from their `workers started` line. */
  logLevel?: string;
  /** EMULATOR_SEED. Default 1. */
  emulatorSeed?: number;
  /** Extra settings for the API and the workers (both). */
  env?: Record<string, string>;
  /** Default `E2E`. */
  workspaceName?: string;
  /** How long each process may take to become ready. Default 45 000. */
  readyTimeoutMs?: number;
  /** The checkout the processes run from (entry points resolved there). Default: this repository. */
  root?: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly kind: ProcessKind;
  readonly pid: number | undefined;
  /** The API's port, or the workers' metrics port. */
  readonly port: number | undefined;
  readonly running: boolean;
  /** stdout and stderr of this process (all its incarnations), as captured. */
  output(): string;
}

export interface ApiResponse<T = unknown> {
  status: number;
  ok: boolean;
  headers: Headers;
  /** Parsed JSON, or the text when the body is not JSON, or undefined when empty. */
  body: T;
}

export interface ApiOptions {
  /** Another API key; `null` sends no Authorization header. Default: the admin key. */
  key?: string | null;
  headers?: Record<string, string>;
}

export interface ConnectionView {
  id: string;
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  status: string;
  statusReason: string | null;
  watermark: string | null;
  createdAt: string;
  updatedAt: string;
  hasCredentials: boolean;
}

export interface ConnectionCredentials {
  accessToken?: string;
  refreshToken?: string;
  /** ISO time. */
  expiresAt?: string;
  /** A HubSpot private-app token instead of OAuth tokens. */
  privateAppToken?: string;
}

interface ProcessSlot {
  name: string;
  kind: ProcessKind;
  env: NodeJS.ProcessEnv;
  port?: number;
  child?: ChildProcess;
  exited?: Promise<void>;
  lines: string[];
}

type System = Awaited<ReturnType<typeof startSystem>>;
export type SyncSystem = System;

// Children of every system in this test process: killed if the runner exits without stop().
const everyChild = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of everyChild)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

/**
 * Starts a whole system: a migrated test database, the emulators, the API and the workers
 * as child processes, each ready; then a workspace and its admin key (through the CLI).
 * On any failure everything started is stopped and the error carries the processes' output.
 */
export async function startSystem(options: StartSystemOptions = {}) {
  installExitHook();
  const label = options.label ?? 'system';
  const readyTimeoutMs = options.readyTimeoutMs ?? 45_000;
  const root = options.root ?? REPO_ROOT;
  const slots = new Map<string, ProcessSlot>();
  const journal: string[] = [];
  let db: TestDatabase | undefined;
  let pool: Pool | undefined;
  let stopped = false;
  const redisPrefix = `${TEST_REDIS_PREFIX}:e2e-${label.replace(/[^a-z0-9-]/gi, '-')}-${randomBytes(4).toString('hex')}`;

  const note = (name: string, line: string) => {
    const stamped = `${new Date().toISOString().slice(11, 23)} [${name}] ${line}`;
    journal.push(stamped);
    if (journal.length > MAX_LINES * 4) journal.splice(0, journal.length - MAX_LINES * 4);
    if (VERBOSE) process.stderr.write(`${stamped}\n`);
  };

  const spawnSlot = (slot: ProcessSlot): ChildProcess => {
    const child = spawnEntry(slot.kind, {
      cwd: root,
      env: slot.env,
      onLine: (line) => {
        slot.lines.push(line);
        note(slot.name, line);
        if (slot.lines.length > MAX_LINES) slot.lines.splice(0, slot.lines.length - MAX_LINES);
      },
    });
    everyChild.add(child);
    note(slot.name, `spawned pid ${child.pid}${slot.port ? ` (port ${slot.port})` : ''}`);
    slot.child = child;
    slot.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        everyChild.delete(child);
        note(slot.name, `exited (code ${code}, signal ${signal})`);
        done();
      }),
    );
    return child;
  };

  const isRunning = (slot: ProcessSlot) =>
    slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null;

  const logs = (names?: string[]) => {
    if (!names) return journal.join('\n');
    const wanted = new Set(names);
    return journal.filter((line) => wanted.has(/\[([^\]]+)\]/.exec(line)?.[1] ?? '')).join('\n');
  };

  /** Waits until `probe` says yes; fails at once (with the output) if the process exits. */
  const awaitReady = async (slot: ProcessSlot, what: string, probe: () => Promise<boolean>) => {
    const child = slot.child!;
    const hasExited = () => child.exitCode !== null || child.signalCode !== null;
    try {
      await waitFor(async () => (hasExited() ? 'exited' : (await probe()) ? 'ready' : 'starting'), {
        timeoutMs: readyTimeoutMs,
        intervalMs: 100,
        describe: `${slot.name} to be ready (${what})`,
        until: (state) => state !== 'starting',
      });
      if (hasExited()) {
        throw new Error(
          `${slot.name} exited while starting (code ${child.exitCode}, signal ${child.signalCode})`,
        );
      }
    } catch (error) {
      const tail = slot.lines.slice(-80).join('\n');
      throw new Error(`${(error as Error).message}\n--- ${slot.name} output (last 80 lines) ---\n${tail}`);
    }
  };

  const ok = (url: string) => httpOk(url);

  // ---- the handle's mutable parts, filled in as the system comes up ----
  let emulatorUrls: EmulatorUrls = { hubspot: '', google: '' };
  let apiUrl = '';
  let baseEnv: NodeJS.ProcessEnv = {};
  let workspace = { workspaceId: '', apiKey: '' };
  let googleClient = { clientId: '', clientSecret: '' };
  let microsoftClient: { clientId: string; clientSecret: string } | undefined;
  const gmailPushToken = randomBytes(16).toString('hex');
  let workersSeq = 0;

  const readyApi = (slot: ProcessSlot) =>
    awaitReady(slot, `GET /readyz on port ${slot.port}`, () => ok(`http://127.0.0.1:${slot.port}/readyz`));
  const readyWorkers = (slot: ProcessSlot) => {
    const from = slot.lines.length;
    return awaitReady(
      slot,
      `a "workers started" line or GET /metrics on port ${slot.port}`,
      async () =>
        slot.lines.slice(from).some((line) => line.includes('workers started')) ||
        (slot.port !== undefined && (await ok(`http://127.0.0.1:${slot.port}/metrics`))),
    );
  };

  const startWorkersSlot = async (env: Record<string, string> = {}): Promise<ManagedProcess> => {
    workersSeq++;
    const name = workersSeq === 1 ? 'workers' : `workers-${workersSeq}`;
    const metricsPort = await freePort();
    const slot: ProcessSlot = {
      name,
      kind: 'workers',
      port: metricsPort,
      env: { ...baseEnv, METRICS_PORT: String(metricsPort), ...env },
      lines: [],
    };
    slots.set(name, slot);
    spawnSlot(slot);
    await readyWorkers(slot);
    return view(slot);
  };

  const view = (slot: ProcessSlot): ManagedProcess => ({
    name: slot.name,
    kind: slot.kind,
    get pid() {
      return slot.child?.pid;
    },
    port: slot.port,
    get running() {
      return isRunning(slot);
    },
    output: () => slot.lines.join('\n'),
  });

  const slotOf = (name: string): ProcessSlot => {
    const slot = slots.get(name);
    if (!slot) throw new Error(`no process named ${name}; there are: ${[...slots.keys()].join(', ')}`);
    return slot;
  };

  /** Sends `signal` and waits for the exit (SIGKILL after `graceMs` if it lingers). */
  const killSlot = async (slot: ProcessSlot, signal: NodeJS.Signals, graceMs = 10_000) => {
    if (!isRunning(slot)) return;
    note(slot.name, `sending ${signal}`);
    slot.child!.kill(signal);
    const exited = await Promise.race([
      slot.exited!.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), graceMs)),
    ]);
    if (!exited) {
      note(slot.name, `still running ${graceMs} ms after ${signal}; sending SIGKILL`);
      slot.child!.kill('SIGKILL');
      await slot.exited;
    }
  };

  const stop = async (opts: { graceful?: boolean } = {}) => {
    if (stopped) return;
    stopped = true;
    // Workers and API first, emulators last (a draining worker may still call them).
    const order = [...slots.values()].sort((a, b) => rank(a.kind) - rank(b.kind));
    for (const slot of order) await killSlot(slot, opts.graceful ? 'SIGTERM' : 'SIGKILL');
    await pool?.end().catch(() => {});
    pool = undefined;
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    } catch (error) {
      note('harness', `could not clean Redis keys ${redisPrefix}*: ${(error as Error).message}`);
    } finally {
      redis.disconnect();
    }
    await db?.drop();
  };

  try {
    db = await createTestDatabase(`e2e_${label}`);
    const apiPort = await freePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;

    // Emulators: free ports chosen by the process itself; it prints {hubspot, google}.
    const emulators: ProcessSlot = {
      name: 'emulators',
      kind: 'emulators',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        EMULATOR_HOST: '127.0.0.1',
        EMULATOR_HUBSPOT_PORT: '0',
        EMULATOR_GOOGLE_PORT: '0',
        EMULATOR_SMTP_PORT: '0',
        EMULATOR_SEED: String(options.emulatorSeed ?? 1),
      },
      lines: [],
    };
    slots.set(emulators.name, emulators);
    spawnSlot(emulators);
    await awaitReady(emulators, 'the {hubspot, google} line, then the control API', async () => {
      emulatorUrls = emulatorUrlsFrom(emulators.lines) ?? emulatorUrls;
      return emulatorUrls.hubspot !== '' && (await emulatorsReady(emulatorUrls));
    });
    googleClient = await emulatorClient(emulatorUrls).google.oauthClient();
    microsoftClient = await emulatorClient(emulatorUrls).microsoft?.oauthClient();

    baseEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // The Microsoft emulator's authority, named by the test setup before any process started.
      ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: options.logLevel ?? 'info',
      SYNCLINE_ENCRYPTION_KEYS: `e2e:${randomBytes(32).toString('base64')}`,
      ...providerSettings({
        emulators: emulatorUrls,
        hubspotApp: E2E_HUBSPOT_APP,
        googleClient,
        ...(microsoftClient ? { microsoftClient } : {}),
        gmailPushToken,
        apiUrl,
        pullIntervalMs: options.pullIntervalMs ?? 500,
        coalesceMs: options.coalesceMs ?? 50,
      }),
      // A build of the app of its own (default apps/web/dist), for runs beside a rebuild.
      ...(process.env.WEB_DIST_DIR ? { WEB_DIST_DIR: process.env.WEB_DIST_DIR } : {}),
      ...options.env,
    };

    const api: ProcessSlot = {
      name: 'api',
      kind: 'api',
      port: apiPort,
      // No metrics port: systems run side by side, and no scenario reads the API's metrics.
      env: { ...baseEnv, PORT: String(apiPort), HOST: '127.0.0.1', API_METRICS_PORT: '0' },
      lines: [],
    };
    slots.set(api.name, api);
    spawnSlot(api);

    // The workspace (CLI, a process of its own) while the API and the workers boot.
    const created = runScript(
      'apps/sync-api/src/cli.ts',
      ['create-workspace', '--name', options.workspaceName ?? 'E2E', '--admin-email', 'admin@e2e.test'],
      baseEnv,
    );
    const workersStarted = Promise.all(
      Array.from({ length: options.workers ?? 1 }, () => startWorkersSlot()),
    );
    const [cli] = await Promise.all([created, readyApi(api), workersStarted]);
    note('cli', (cli.stdout + cli.stderr).trim().replace(/"apiKey":"[^"]+"/, '"apiKey":"…"'));
    if (cli.code !== 0) throw new Error(`create-workspace exited ${cli.code}: ${cli.stderr || cli.stdout}`);
    workspace = JSON.parse(cli.stdout.trim().split('\n').pop() ?? '') as typeof workspace;
  } catch (error) {
    const output = logs();
    await stop().catch((e: unknown) => note('harness', `cleanup after a failed start: ${String(e)}`));
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`startSystem failed: ${message}\n=== system output ===\n${output.slice(-30_000)}`, {
      cause: error,
    });
  }

  const database = db;
  const base = emulatorClient(emulatorUrls);
  const hubspotWebhookUrl = `${apiUrl}/webhooks/hubspot`;

  const api = async <T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts: ApiOptions = {},
  ): Promise<ApiResponse<T>> => {
    const key = opts.key === undefined ? workspace.apiKey : opts.key;
    const headers: Record<string, string> = { ...opts.headers };
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text === '' ? undefined : text;
    if (text !== '' && (res.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // keep the text
      }
    }
    return { status: res.status, ok: res.ok, headers: res.headers, body: parsed as T };
  };

  const emulator = {
    ...base,
    hubspot: {
      ...base.hubspot,
      /** A portal with our app installed (E2E_HUBSPOT_APP unless given); `webhooks: true` targets our API. */
      createPortal: (
        input: Partial<CreatePortalInput> & { portalId: number; webhooks?: boolean },
      ): Promise<HubspotPortalGrant> => {
        const { webhooks, ...rest } = input;
        return base.hubspot.createPortal({
          appId: E2E_HUBSPOT_APP.appId,
          clientId: E2E_HUBSPOT_APP.clientId,
          clientSecret: E2E_HUBSPOT_APP.clientSecret,
          ...(webhooks ? { webhookUrl: hubspotWebhookUrl } : {}),
          ...rest,
        });
      },
      /** Points the portal's webhooks at our `POST /webhooks/hubspot` (or `url`; `null` = off). */
      setWebhookTarget: (portalId: number, url: string | null = hubspotWebhookUrl) =>
        base.hubspot.setWebhookTarget(portalId, url),
    },
  };

  return {
    urls: {
      api: apiUrl,
      hubspot: emulatorUrls.hubspot,
      google: emulatorUrls.google,
      microsoft: emulatorUrls.microsoft,
      hubspotWebhook: hubspotWebhookUrl,
      smtp: emulatorUrls.smtp,
    },
    database: { name: database.name, url: database.url },
    redisPrefix,
    workspace,
    hubspotApp: E2E_HUBSPOT_APP,
    googleClient,
    gmailPushToken,
    /** The settings the API and the workers run with (for runScript and the like). */
    env: baseEnv,
    api,
    emulator,
    /** Connects an account through `POST /api/v1/connections`; throws unless 201. */
    connect: async (
      provider: ProviderKey,
      externalAccountId: string,
      credentials: ConnectionCredentials,
      extra: { displayName?: string; dryRun?: boolean } = {},
    ): Promise<ConnectionView> => {
      const res = await api<ConnectionView>('POST', '/api/v1/connections', {
        provider,
        externalAccountId,
        credentials,
        ...extra,
      });
      if (res.status !== 201) {
        throw new Error(
          `connect ${provider} ${externalAccountId}: ${res.status} ${JSON.stringify(res.body)}`,
        );
      }
      return res.body;
    },
    /** A query on the system's database (a small pool, closed by stop()). */
    query: async <R extends QueryResultRow = Record<string, unknown>>(
      sql: string,
      params: unknown[] = [],
    ) => {
      pool ??= new Pool({ connectionString: database.url, max: 2 });
      return (await pool.query<R>(sql, params)).rows;
    },
    process: (name: string): ManagedProcess => view(slotOf(name)),
    processes: (): ManagedProcess[] => [...slots.values()].map(view),
    /** Starts one more workers process (`workers-2`, …) and waits until it is ready. */
    startWorkers: (env: Record<string, string> = {}) => startWorkersSlot(env),
    /** Signals a process (default SIGKILL) and waits until it has exited. */
    kill: async (name: string, signal: NodeJS.Signals = 'SIGKILL') => {
      await killSlot(slotOf(name), signal, signal === 'SIGKILL' ? 10_000 : 15_000);
    },
    /**
     * Starts the API or a workers process again (same port, same settings), after stopping
     * it with SIGTERM if it still runs, and waits until it is ready.
     */
    restart: async (name: string): Promise<ManagedProcess> => {
      const slot = slotOf(name);
      if (slot.kind === 'emulators') throw new Error('the emulators keep their state in memory: no restart');
      await killSlot(slot, 'SIGTERM');
      spawnSlot(slot);
      await (slot.kind === 'api' ? readyApi(slot) : readyWorkers(slot));
      return view(slot);
    },
    /** Everything every process printed, interleaved and timestamped (or only `names`). */
    logs,
    dumpLogs: (reason = 'system output') => {
      const lines = journal.slice(-5_000).join('\n');
      process.stderr.write(`\n===== ${reason} (${label}) =====\n${lines}\n===== end of ${reason} =====\n`);
    },
    /** Kills every process (SIGKILL, or SIGTERM first with `graceful`), removes the Redis keys, drops the database. */
    stop,
  };
}

const rank = (kind: ProcessKind) => (kind === 'workers' ? 0 : kind === 'api' ? 1 : 2);

/**
 * Registers the hooks of a file that runs one system: started before all tests, its output
 * dumped when a test fails, stopped after all. Call it at the top of a describe (or file);
 * the returned function gives the running system inside tests.
 */
export function useSystem(options: StartSystemOptions = {}): () => SyncSystem {
  let system: SyncSystem | undefined;
  beforeAll(async () => {
    system = await startSystem(options);
  });
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => system?.dumpLogs('system output of the failed test'));
  });
  afterAll(async () => {
    await system?.stop();
  });
  return () => {
    if (!system) throw new Error('the system is not running (did startSystem fail in beforeAll?)');
    return system;
  };
}

/**
 * Waits until a connection is reconciled (its backfill linked, so creates may go to it) and the
 * workspace shows `people` people. The creates owed to a connection wait for its reconcile: a
 * test that counts them (a dry-run report's, say) must start after it, not race it.
 */
export async function waitForReconciled(
  system: SyncSystem,
  connectionId: string,
  { people, name, timeoutMs = 60_000 }: { people: number; name: string; timeoutMs?: number },
): Promise<void> {
  await waitFor(
    async () => {
      const listed = await system.api<{ data: unknown[] }>('GET', '/api/v1/people?limit=100');
      const [row] = await system.query<{ reconciled: boolean }>(
        'SELECT reconciled_at IS NOT NULL AS reconciled FROM connection WHERE id = $1',
        [connectionId],
      );
      return listed.body.data.length === people && row?.reconciled === true;
    },
    { timeoutMs, describe: `${name} reconciled, its ${people} people synced` },
  );
}
