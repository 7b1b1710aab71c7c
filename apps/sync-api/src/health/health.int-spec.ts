import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../testing/processes';
import { scrapeMetrics, startTestApp, type TestApp } from '../testing/test-app';

describe('probes, metrics and docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('health', { API_METRICS_PORT: String(await freePort()) });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET /healthz answers without auth', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz is ok when Postgres and Redis answer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
    expect(res.statusCode).toBe(200);
  });

  it('tags every response with a request id, keeping a tame one the caller sent', async () => {
    const mine = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(mine.headers['x-request-id']).toBe('trace-123');
    const fresh = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'bad id\twith tab' },
    });
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET /metrics on the metrics port serves Prometheus text with process metrics and requests by route and status', async () => {
    await t.app.inject({ method: 'GET', url: '/api/v1/me' });
    const res = await scrapeMetrics(t);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await res.text();
    expect(body).toContain('process_cpu_user_seconds_total');
    expect(body).toMatch(/syncline_http_requests_total\{method="GET",route="\/api\/v1\/me",status="401"\} 1/);
    expect(body).toMatch(/syncline_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect((await scrapeMetrics(t, '/healthz')).status).toBe(404);
  });

  it('the API port serves no metrics: they are for the operator, not the callers', async () => {
    for (const url of ['/metrics', '/metrics/', '/metrics?format=text']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('process_cpu_user_seconds_total');
    }
  });

  it('serves the OpenAPI document listing the routes and the bearer scheme', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{
      openapi: string;
      paths: Record<
        string,
        Record<string, { security?: unknown[]; requestBody?: unknown; responses: object }>
      >;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
    }>();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/readyz',
        '/api/v1/me',
        '/api/v1/api-keys',
        '/api/v1/api-keys/{id}',
        '/api/v1/connections',
        '/api/v1/connections/{id}',
      ]),
    );
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/v1/connections']?.post?.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(doc.paths['/api/v1/connections']?.post?.responses ?? {}).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      // The provider could not be asked whose account the credentials open.
      '503',
    ]);
    // The request body schema comes from the same zod schema the pipe validates with.
    expect(JSON.stringify(doc.paths['/api/v1/connections']?.post?.requestBody)).toContain('google-calendar');

    const ui = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('readiness with Redis away', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('health_noredis', { REDIS_URL: 'redis://127.0.0.1:1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET /readyz is 503 and names Redis, quickly', async () => {
    const started = Date.now();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', checks: { postgres: 'ok', redis: 'down' } });
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('GET /healthz still answers: the process is up', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
  });
});
