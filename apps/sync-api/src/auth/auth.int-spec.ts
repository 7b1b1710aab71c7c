import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_CHANNEL } from '../api-keys/api-key-cache';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { generateApiKey } from './api-key-format';

describe('API-key auth', () => {
  let t: TestApp;
  let workspaceId: string;
  let adminKey: string;
  let salesKey: string;

  beforeAll(async () => {
    t = await startTestApp('auth');
    ({ workspaceId, adminKey } = await seedWorkspace(t.prisma, 'Acme'));
    salesKey = await createApiKey(t.app, adminKey, 'sales', 'rep');
  });
  afterAll(async () => {
    await t?.close();
  });

  const me = (headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: '/api/v1/me', headers });

  it('401 without a key, in the error shape, with a Bearer challenge', async () => {
    const res = await me();
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['a malformed key', 'Bearer not-a-key'],
    ['the wrong scheme', 'Basic dXNlcjpwYXNz'],
    ['an unknown key', `Bearer ${generateApiKey().key}`],
  ])('401 for %s', async (_case, authorization) => {
    const res = await me({ authorization });
    expect(res.statusCode).toBe(401);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('unauthorized');
  });

  it('401 for a known prefix with the wrong secret', async () => {
    const [, prefix] = adminKey.split('_');
    const res = await me(bearer(`sk_${prefix}_${generateApiKey().secret}`));
    expect(res.statusCode).toBe(401);
  });

  it('GET /api/v1/me names the workspace, key and role', async () => {
    const admin = await me(bearer(adminKey));
    expect(admin.statusCode).toBe(200);
    const keyId = admin.json<{ apiKeyId: string }>().apiKeyId;
    expect(admin.json()).toEqual({
      workspaceId,
      role: 'admin',
      actor: { kind: 'apiKey', id: keyId },
      apiKeyId: keyId,
    });
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    const sales = await me(bearer(salesKey));
    expect(sales.json()).toMatchObject({ workspaceId, role: 'sales' });
  });

  it('records lastUsedAt at most once a minute', async () => {
    const [, prefix] = salesKey.split('_');
    await me(bearer(salesKey));
    const first = await t.prisma.apiKey.findUniqueOrThrow({ where: { prefix: prefix! } });
    expect(first.lastUsedAt).toBeInstanceOf(Date);
    await me(bearer(salesKey));
    const second = await t.prisma.apiKey.findUniqueOrThrow({ where: { prefix: prefix! } });
    expect(second.lastUsedAt).toEqual(first.lastUsedAt);

    // Once the last use is older than the window, the next request records again.
    const old = new Date(Date.now() - 5 * 60_000);
    await t.prisma.apiKey.update({ where: { prefix: prefix! }, data: { lastUsedAt: old } });
    // A changed key row is announced, so that API processes read it again instead of their cache.
    await t.prisma.$executeRaw`SELECT pg_notify(${API_KEY_CHANNEL}, ${prefix!})`;
    let third = old;
    for (const deadline = Date.now() + 2_000; third <= old && Date.now() < deadline; ) {
      await me(bearer(salesKey));
      third = (await t.prisma.apiKey.findUniqueOrThrow({ where: { prefix: prefix! } })).lastUsedAt!;
    }
    expect(third.getTime()).toBeGreaterThan(old.getTime());
  });

  it('403 for a sales key on admin routes', async () => {
    const createKey = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(salesKey),
      payload: { name: 'sneaky', role: 'admin' },
    });
    expect(createKey.statusCode).toBe(403);
    expect(createKey.json()).toEqual({
      error: { code: 'forbidden', message: expect.stringContaining('admin') },
    });

    const createConnection = await t.app.inject({
      method: 'POST',
      url: '/api/v1/connections',
      headers: bearer(salesKey),
      payload: { provider: 'hubspot', externalAccountId: '1', credentials: { privateAppToken: 'x' } },
    });
    expect(createConnection.statusCode).toBe(403);
    expect(createConnection.json<{ error: { code: string } }>().error.code).toBe('forbidden');

    // Reading is open to any role.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/connections', headers: bearer(salesKey) });
    expect(list.statusCode).toBe(200);
  });

  it('401 once a key is revoked', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(adminKey),
      payload: { name: 'short-lived', role: 'sales' },
    });
    const { id, key } = created.json<{ id: string; key: string }>();
    expect((await me(bearer(key))).statusCode).toBe(200);

    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${id}`,
      headers: bearer(adminKey),
    });
    expect(revoked.statusCode).toBe(204);
    const after = await me(bearer(key));
    expect(after.statusCode).toBe(401);
    expect(after.json<{ error: { code: string } }>().error.code).toBe('unauthorized');
  });

  it('404 in the error shape for an unknown route', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('not_found');
  });

  it('never logs the Authorization header, and tags request logs with the tenant', async () => {
    await me(bearer(adminKey));
    const [, , adminSecret] = /^sk_([0-9a-f]+)_(.+)$/.exec(adminKey)!;
    const all = t.logs.join('');
    expect(all).not.toContain(adminSecret);
    expect(all).not.toContain(salesKey.slice(20));
    const completed = t.logs
      .map(
        (line) =>
          JSON.parse(line) as {
            msg?: string;
            workspaceId?: string;
            req?: { url?: string; headers?: Record<string, string> };
          },
      )
      .filter(
        (line) => line.msg === 'request completed' && line.req?.url === '/api/v1/me' && line.workspaceId,
      );
    expect(completed.length).toBeGreaterThan(0);
    expect(completed[0]!.workspaceId).toBe(workspaceId);
    expect(completed[0]!.req?.headers?.authorization).toBe('[redacted]');
  });

  it("tags a request's lines with its own id and tenant only: a later request without a key carries no tenant", async () => {
    await me({ ...bearer(adminKey), 'x-request-id': 'admin-before-anonymous' });
    await me({ 'x-request-id': 'anonymous-after-admin' });
    const lines = t.logs.map(
      (line) =>
        JSON.parse(line) as {
          msg?: string;
          reqId?: string;
          workspaceId?: string;
          req?: { id?: string; headers?: Record<string, string> };
          res?: { statusCode?: number };
        },
    );
    const completed = (id: string) =>
      lines.filter((line) => line.reqId === id && line.msg === 'request completed');
    const [admin] = completed('admin-before-anonymous');
    expect(admin).toMatchObject({
      workspaceId,
      res: { statusCode: 200 },
      req: { id: 'admin-before-anonymous' },
    });
    expect(admin!.req?.headers?.authorization).toBe('[redacted]');
    const [anonymous] = completed('anonymous-after-admin');
    expect(anonymous).toMatchObject({ res: { statusCode: 401 }, req: { id: 'anonymous-after-admin' } });
    for (const line of lines.filter((l) => l.reqId === 'anonymous-after-admin')) {
      expect(line).not.toHaveProperty('workspaceId');
      expect(line).not.toHaveProperty('apiKeyId');
    }
  });
});
