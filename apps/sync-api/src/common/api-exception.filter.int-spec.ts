import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

describe('errors nobody planned for', () => {
  let t: TestApp;
  let adminKey: string;
  beforeAll(async () => {
    t = await startTestApp('internal_error');
    ({ adminKey } = await seedWorkspace(t.prisma, 'Acme'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['a broken percent-escape', '/api/v1/people/%zz', 400, 'bad_request'],
    ['a truncated escape', '/api/v1/policies/%E0%A4%A', 400, 'bad_request'],
    ['a path parameter past the router limit', `/api/v1/people/${'a'.repeat(150)}`, 414, 'uri_too_long'],
  ])('a URL the router cannot read (%s) is answered in the error shape', async (_name, url, status, code) => {
    const res = await t.app.inject({ method: 'GET', url, headers: bearer(adminKey) });
    expect([res.statusCode, res.json()]).toEqual([status, { error: { code, message: expect.any(String) } }]);
  });

  it('a form-encoded body is 415 on a JSON route (it was read as JSON would be), JSON as before', async () => {
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...bearer(adminKey), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=rep&role=sales',
    });
    expect([form.statusCode, form.json()]).toEqual([
      415,
      { error: { code: 'unsupported_media_type', message: expect.any(String) } },
    ]);
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(adminKey),
      payload: { name: 'rep', role: 'sales' },
    });
    expect(json.statusCode).toBe(201);
  });

  it('a URL or headers past what Node reads is 431 in the error shape (Node refuses it before the app)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = await t.app.getUrl();
    const huge = 'a'.repeat(100_000);
    for (const [url, headers] of [
      [`${base}/api/v1/people?q=${huge}`, bearer(adminKey)],
      [`${base}/api/v1/me`, { ...bearer(adminKey), 'x-padding': huge }],
    ] as const) {
      const res = await fetch(url, { headers });
      expect([res.status, res.headers.get('content-type'), await res.json()]).toEqual([
        431,
        'application/json; charset=utf-8',
        { error: { code: 'headers_too_large', message: expect.any(String) } },
      ]);
    }
  });

  it('answer 500 internal without driver detail, and log the detail instead', async () => {
    // The database vanishing mid-flight: every query now fails inside Prisma.
    await t.db.drop();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(adminKey) });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(res.body).not.toMatch(/prisma|syncline_test|\bat\b|stack/i);

    const logged = t.logs.map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } });
    const unhandled = logged.find((line) => line.msg === 'unhandled error');
    expect(unhandled?.err?.message).toContain(t.db.name);
  });
});
