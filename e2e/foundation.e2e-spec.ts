import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { ChangeLog, LogConsumer } from '@syncline/log';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, runScript } from '../apps/sync-api/src/testing/processes';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../test/support/env';
import { change } from '../test/support/fixtures';

// The foundation as a user runs it: the CLI, the API and the workers as separate
// processes on one PostgreSQL database and one Redis.

let db: TestDatabase;
let pool: Pool;
let redis: Redis;
const prefix = `${TEST_REDIS_PREFIX}:e2e-${randomBytes(4).toString('hex')}`;
const children: ChildProcess[] = [];
let env: NodeJS.ProcessEnv;
// The API proves a connection's account by asking the provider: the Google emulator here.
let emulators: RunningEmulators;

function start(
  script: string,
  extraEnv: NodeJS.ProcessEnv = {},
): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, ['-r', '@swc-node/register', script], {
    cwd: REPO_ROOT,
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  children.push(proc);
  return { proc, output: () => out };
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  db = await createTestDatabase('e2e_foundation');
  pool = new Pool({ connectionString: db.url, max: 4 });
  redis = new Redis(TEST_REDIS_URL);
  emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  env = {
    PATH: process.env.PATH,
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    SYNCLINE_ENCRYPTION_KEYS: `e2e:${randomBytes(32).toString('base64')}`,
    HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
    GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
    GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
  };
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await pool.end();
  await db.drop();
  await emulators?.close();
});

describe('foundation, process by process', () => {
  it('a workspace made by the CLI is served by the API with roles and tenant isolation', async () => {
    const first = await runScript('apps/sync-api/src/cli.ts', ['create-workspace', '--name', 'Acme'], env);
    const second = await runScript('apps/sync-api/src/cli.ts', ['create-workspace', '--name', 'Globex'], env);
    expect(first.code).toBe(0);
    const acme = JSON.parse(first.stdout) as { workspaceId: string; apiKey: string };
    const globex = JSON.parse(second.stdout) as { workspaceId: string; apiKey: string };

    const port = await freePort();
    const api = start('apps/sync-api/src/main.ts', { PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    const ready = await eventually(async () => {
      const res = await fetch(`${base}/readyz`);
      return res.ok ? res.json() : undefined;
    });
    expect(ready).toMatchObject({ checks: { postgres: 'ok', redis: 'ok' } });

    const as = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
    // Dana's grant in the Google emulator: the API asks Google whose address the token opens.
    const grant = (await (
      await fetch(`${emulators.googleUrl}/_emulator/google/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'dana@example.com' }),
      })
    ).json()) as { accessToken: string; refreshToken: string };
    const secret = grant.refreshToken;
    const created = await fetch(`${base}/api/v1/connections`, {
      method: 'POST',
      headers: as(acme.apiKey),
      body: JSON.stringify({
        provider: 'google-calendar',
        externalAccountId: 'dana@example.com',
        credentials: { accessToken: grant.accessToken, refreshToken: secret },
      }),
    });
    expect(created.status).toBe(201);
    const connection = (await created.json()) as { id: string };
    expect(JSON.stringify(connection)).not.toContain(secret);

    const salesKey = await fetch(`${base}/api/v1/api-keys`, {
      method: 'POST',
      headers: as(acme.apiKey),
      body: JSON.stringify({ name: 'rep', role: 'sales' }),
    });
    const sales = (await salesKey.json()) as { key: string };
    expect(
      (await fetch(`${base}/api/v1/connections/${connection.id}`, { headers: as(sales.key) })).status,
    ).toBe(200);
    const forbidden = await fetch(`${base}/api/v1/api-keys`, {
      method: 'POST',
      headers: as(sales.key),
      body: '{}',
    });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: { code: 'forbidden' } });
    const hidden = await fetch(`${base}/api/v1/connections/${connection.id}`, { headers: as(globex.apiKey) });
    expect(hidden.status).toBe(404);
    expect((await fetch(`${base}/api/v1/connections/${connection.id}`)).status).toBe(401);
    // The secret is on disk only as ciphertext, and never in a log line.
    const row = await pool.query('SELECT credentials_ciphertext::text AS c FROM connection WHERE id = $1', [
      connection.id,
    ]);
    expect(row.rows[0].c).not.toContain(secret);
    expect(api.output()).not.toContain(secret);
    expect(api.output()).not.toContain(acme.apiKey);
  });

  it('the workers enforce log retention on events every consumer group has read, and survive SIGKILL', async () => {
    const { rows } = await pool.query<{ id: string; workspace_id: string }>(
      'SELECT id, workspace_id FROM connection LIMIT 1',
    );
    const conn = { connectionId: rows[0]!.id, workspaceId: rows[0]!.workspace_id };
    const log = new ChangeLog(pool, { partitions: 16 });
    await log.init();
    const appended = await log.append(
      Array.from({ length: 30 }, (_, i) => change(conn, { externalId: `r-${i}` })),
    );
    expect(appended.ok).toBe(true);
    await log.close();
    const reader = new LogConsumer({
      connection: db.url,
      group: 'reader',
      partitions: 16,
      handler: async () => {},
    });
    await reader.start();
    await reader.processAvailable();
    await reader.stop();
    await pool.query(`UPDATE change_event SET ingested_at = now() - interval '3 hours'`);

    const workersEnv = { LOG_RETENTION_HOURS: '1', RETENTION_INTERVAL_MS: '1000' };
    const first = start('apps/workers/src/main.ts', workersEnv);
    await eventually(async () => (first.output().includes('workers started') ? true : undefined));
    first.proc.kill('SIGKILL');
    // A second process picks the schedule up from Redis and runs it.
    const second = start('apps/workers/src/main.ts', workersEnv);
    const left = await eventually(async () => {
      const n = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event')).rows[0]!.n;
      return n === 0 ? n : undefined;
    });
    expect(left).toBe(0);
    second.proc.kill('SIGTERM');
  });

  it('the workers refuse to start without Redis, naming the setting', async () => {
    const result = await runScript('apps/workers/src/main.ts', [], {
      ...env,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toMatch(/REDIS_URL/);
  });
});
