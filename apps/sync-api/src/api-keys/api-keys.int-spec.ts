import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface KeyView {
  id: string;
  name: string;
  role: string;
  prefix: string;
  key?: string;
  revokedAt: string | null;
}

describe('api keys', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };

  beforeAll(async () => {
    t = await startTestApp('api_keys');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (key: string, payload: object) =>
    t.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: bearer(key), payload });

  it('returns a new key once, and stores only the SHA-256 of its secret', async () => {
    const res = await create(a.adminKey, { name: 'ci', role: 'sales' });
    expect(res.statusCode).toBe(201);
    const created = res.json<KeyView>();
    expect(created).toMatchObject({ name: 'ci', role: 'sales', revokedAt: null });
    expect(created.key).toMatch(new RegExp(`^sk_${created.prefix}_[A-Za-z0-9_-]{43}$`));

    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.workspaceId).toBe(a.workspaceId);
    const secret = created.key!.slice(`sk_${created.prefix}_`.length);
    expect(Buffer.from(row.secretHash).equals(createHash('sha256').update(secret).digest())).toBe(true);
  });

  it('lists the workspace keys without any secret', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(a.adminKey) });
    expect(res.statusCode).toBe(200);
    const { data } = res.json<{ data: KeyView[] }>();
    expect(data.map((k) => k.name)).toEqual(['initial admin key', 'ci']);
    for (const key of data) {
      expect(Object.keys(key).sort()).toEqual([
        'createdAt',
        'id',
        'lastUsedAt',
        'name',
        'prefix',
        'revokedAt',
        'role',
      ]);
    }
    expect(res.body).not.toContain(a.adminKey.slice(20));
  });

  it("404 when revoking another workspace's key, which keeps working", async () => {
    const victim = (await create(a.adminKey, { name: 'victim', role: 'sales' })).json<KeyView>();
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${victim.id}`,
      headers: bearer(b.adminKey),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(victim.key!) });
    expect(me.statusCode).toBe(200);
  });

  it('revoking is idempotent and shows in the list', async () => {
    const key = (await create(a.adminKey, { name: 'temp', role: 'admin' })).json<KeyView>();
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/api-keys/${key.id}`,
        headers: bearer(a.adminKey),
      });
      expect(res.statusCode).toBe(204);
    }
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(a.adminKey) });
    const listed = list.json<{ data: KeyView[] }>().data.find((k) => k.id === key.id);
    expect(listed?.revokedAt).toEqual(expect.any(String));
  });

  it('400 validation_failed naming the bad field', async () => {
    const res = await create(a.adminKey, { name: 'x', role: 'owner' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'validation_failed', message: expect.stringMatching(/^invalid request: role: /) },
    });
    const badId = await t.app.inject({
      method: 'DELETE',
      url: '/api/v1/api-keys/42',
      headers: bearer(a.adminKey),
    });
    expect(badId.statusCode).toBe(400);
  });
});
