import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.factory';
import { loadAppConfig } from '../config/app-config';
import { LISTENER_APPLICATION_NAME, PgListener } from '../infra/pg-listener';
import {
  bearer,
  createApiKey,
  seedWorkspace,
  startTestApp,
  type TestApp,
  testEnv,
} from '../testing/test-app';
import { API_KEY_CHANNEL, ApiKeyCache } from './api-key-cache';

/**
 * Two API processes on one database (two apps here): each keeps the keys it authenticated,
 * and a revocation made through either reaches both.
 */
describe('API-key cache', () => {
  let t: TestApp;
  let other: NestFastifyApplication;
  let sql: Client;
  let adminKey: string;

  beforeAll(async () => {
    t = await startTestApp('api_key_cache');
    other = await createApp(loadAppConfig(testEnv(t.db.url)), { logDestination: { write: () => undefined } });
    sql = new Client({ connectionString: t.db.url });
    await sql.connect();
    ({ adminKey } = await seedWorkspace(t.prisma, 'Cache'));
  });
  afterAll(async () => {
    await sql?.end();
    await other?.close();
    await t?.close();
  });

  const me = (app: NestFastifyApplication, key: string) =>
    app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) });
  const prefixOf = (key: string) => key.split('_')[1]!;
  /** Revoked behind the API's back: no notification, as if the row changed by hand. */
  const revokeSilently = (key: string) =>
    sql.query('UPDATE api_key SET revoked_at = now() WHERE prefix = $1', [prefixOf(key)]);
  async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('serves a key it has authenticated without reading it again', async () => {
    const key = await createApiKey(t.app, adminKey, 'sales', 'cached');
    expect((await me(t.app, key)).statusCode).toBe(200);
    await revokeSilently(key);
    // Unannounced, the revocation is not seen: the answer came from the cache, not the row.
    expect((await me(t.app, key)).statusCode).toBe(200);
    expect(t.app.get(ApiKeyCache).size).toBeGreaterThan(0);
    // Announced, it is.
    await sql.query('SELECT pg_notify($1, $2)', [API_KEY_CHANNEL, prefixOf(key)]);
    await eventually(async () => (await me(t.app, key)).statusCode === 401);
  });

  it('a revocation through one process stops the key in the other at once', async () => {
    const key = await createApiKey(t.app, adminKey, 'sales', 'two-processes');
    expect((await me(t.app, key)).statusCode).toBe(200);
    expect((await me(other, key)).statusCode).toBe(200);
    const id = (await t.prisma.apiKey.findUniqueOrThrow({ where: { prefix: prefixOf(key) } })).id;

    const revoked = await other.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${id}`,
      headers: bearer(adminKey),
    });
    expect(revoked.statusCode).toBe(204);
    // The revoking process drops it before answering.
    expect((await me(other, key)).statusCode).toBe(401);
    // The other one within the notification's trip.
    const started = Date.now();
    await eventually(async () => (await me(t.app, key)).statusCode === 401, 2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('without its LISTEN connection the cache serves nothing, and starts empty once it is back', async () => {
    const key = await createApiKey(t.app, adminKey, 'sales', 'listener-lost');
    expect((await me(t.app, key)).statusCode).toBe(200);
    const listener = t.app.get(PgListener);
    const { rows } = await sql.query<{ terminated: boolean }>(
      `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(rows.length).toBeGreaterThan(0);
    await eventually(async () => !listener.listening);
    expect(t.app.get(ApiKeyCache).size).toBe(0);
    // While nothing can be heard, every request reads the row: a silent revocation counts.
    await revokeSilently(key);
    expect((await me(t.app, key)).statusCode).toBe(401);
    await eventually(async () => listener.listening, 15_000);
    // Caching again.
    const fresh = await createApiKey(t.app, adminKey, 'sales', 'after-reconnect');
    expect((await me(t.app, fresh)).statusCode).toBe(200);
    await revokeSilently(fresh);
    expect((await me(t.app, fresh)).statusCode).toBe(200);
  });
});
