import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { type SignedIn, signInAs } from '../testing/sign-in';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { WORKER_QUEUE_NAMES } from './queue-dashboard.module';

interface QueuesBody {
  queues: { name: string; counts: Record<string, number> }[];
}

describe('the queues dashboard at /admin/queues', () => {
  let t: TestApp;
  let webDist: string;
  let ws: { workspaceId: string; adminKey: string };
  let admin: SignedIn;
  let sales: SignedIn;
  let redis: Redis;
  let pull: Queue;

  beforeAll(async () => {
    // A built web app is served beside it: its catch-all must leave /admin/queues to the API.
    webDist = mkdtempSync(join(tmpdir(), 'syncline-web-'));
    writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>the web app</title>');
    t = await startTestApp('queue_dashboard', { WEB_DIST_DIR: webDist });
    ws = await seedWorkspace(t.prisma, 'Acme');
    admin = await signInAs(t.app, { workspaceId: ws.workspaceId, email: 'ops@acme.test', role: 'admin' });
    sales = await signInAs(t.app, { workspaceId: ws.workspaceId, email: 'rep@acme.test', role: 'sales' });
    const config = t.app.get<AppConfig>(APP_CONFIG);
    redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
    pull = new Queue('pull', { connection: redis, prefix: config.REDIS_PREFIX });
    // A failed job to see and retry: a worker that refuses it, once.
    const worker = new Worker(
      'pull',
      async () => {
        throw new Error('RateLimited: slow down');
      },
      { connection: redis.duplicate(), prefix: config.REDIS_PREFIX },
    );
    const failed = new Promise((resolve) => worker.once('failed', resolve));
    await pull.add(
      'connection.pull',
      { connectionId: '0190a000-0000-7000-8000-0000000000c1' },
      { jobId: 'p1' },
    );
    await failed;
    await worker.close();
  }, 60_000);
  afterAll(async () => {
    await pull?.obliterate({ force: true }).catch(() => undefined);
    await pull?.close();
    redis?.disconnect();
    await t?.close();
    rmSync(webDist, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  it('sends a visitor without a session to sign in, and back', async () => {
    for (const path of ['/admin/queues', '/admin/queues/queue/pull']) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(302);
      expect(res.headers.location).toBe(`/sign-in?returnTo=${encodeURIComponent(path)}`);
    }
    // ... and a session that has ended too.
    const ended = await get('/admin/queues', { cookie: `${admin.cookie.split('=')[0]}=made-up` });
    expect(ended.statusCode).toBe(302);
    // Its API answers 401 in the API's error shape.
    const api = await get('/admin/queues/api/queues');
    expect(api.statusCode).toBe(401);
    expect(api.json<{ error: { code: string } }>().error.code).toBe('unauthorized');
  });

  it('refuses a sales member and a sales key with 403 forbidden', async () => {
    const key = await createApiKey(t.app, ws.adminKey, 'sales', 'rep key');
    for (const headers of [{ cookie: sales.cookie }, bearer(key)]) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const res = await get(path, headers);
        expect(res.statusCode, path).toBe(403);
        expect(res.json<{ error: { code: string } }>().error.code).toBe('forbidden');
      }
    }
  });

  it("shows an admin the dashboard, under its own CSP, with the workers' queues", async () => {
    const page = await get('/admin/queues', { cookie: admin.cookie });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<base href="/admin/queues/"');
    expect(page.body).not.toContain('the web app');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // Its scripts are served from under the same prefix.
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(page.body)?.[1];
    expect(script).toBeDefined();
    const asset = await get(`/admin/queues/${script}`, { cookie: admin.cookie });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);

    const res = await get('/admin/queues/api/queues?activeQueue=pull&status=failed&page=1', {
      cookie: admin.cookie,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<QueuesBody>();
    expect(body.queues.map((q) => q.name).sort()).toEqual([...WORKER_QUEUE_NAMES].sort());
    expect(body.queues.find((q) => q.name === 'pull')!.counts.failed).toBe(1);
    // An admin API key may read it too.
    expect((await get('/admin/queues/api/queues', bearer(ws.adminKey))).statusCode).toBe(200);
  });

  it("takes an admin's writes only from the app's own origin", async () => {
    const retry = (headers: Record<string, string>) =>
      t.app.inject({ method: 'PUT', url: '/admin/queues/api/queues/pull/retry/failed', headers });
    const foreign: Record<string, string>[] = [
      { cookie: admin.cookie },
      { cookie: admin.cookie, origin: 'https://evil.test' },
    ];
    for (const headers of foreign) {
      const res = await retry(headers);
      expect(res.statusCode).toBe(403);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('csrf_failed');
    }
    expect(await pull.getJobCounts('failed')).toEqual({ failed: 1 });
    // A sales member may not write, whatever the origin.
    expect((await retry({ cookie: sales.cookie, origin: admin.writeHeaders.origin! })).statusCode).toBe(403);

    const res = await retry({ cookie: admin.cookie, origin: admin.writeHeaders.origin! });
    expect(res.statusCode).toBe(200);
    // Retried: waiting for a worker again.
    expect(await pull.getJobCounts('failed', 'waiting')).toEqual({ failed: 0, waiting: 1 });
  });

  it('leaves an unknown path under /admin/queues a 404, not a page of the web app', async () => {
    const res = await get('/admin/queues/nothing/here', { cookie: admin.cookie });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('the web app');
    // The app's own pages still are: /admin/health is one.
    expect((await get('/admin/health')).body).toContain('the web app');
  });

  // Last: it adds a workspace. The queues hold every workspace's jobs, so once there are several
  // only the operators' workspace (QUEUE_DASHBOARD_WORKSPACE_ID) may look.
  it("keeps every tenant's admins out once there are several workspaces, but the operators'", async () => {
    const other = await seedWorkspace(t.prisma, 'Globex');
    const otherAdmin = await signInAs(t.app, {
      workspaceId: other.workspaceId,
      email: 'ops@globex.test',
      role: 'admin',
    });
    const refused = async (app: TestApp, headers: Record<string, string>) => {
      for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
        const res = await app.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, url).toBe(403);
        expect(res.json<{ error: { code: string; message: string } }>().error.message).toMatch(
          /QUEUE_DASHBOARD_WORKSPACE_ID/,
        );
      }
    };
    for (const headers of [{ cookie: admin.cookie }, bearer(ws.adminKey), { cookie: otherAdmin.cookie }])
      await refused(t, headers);
    // An API over the same database that names Acme the operators' workspace.
    const ops = await startTestApp('queue_dashboard_ops', {
      DATABASE_URL: t.db.url,
      REDIS_PREFIX: t.config.REDIS_PREFIX,
      QUEUE_DASHBOARD_WORKSPACE_ID: ws.workspaceId,
    });
    try {
      const res = await ops.app.inject({
        method: 'GET',
        url: '/admin/queues/api/queues',
        headers: { cookie: admin.cookie },
      });
      expect(res.statusCode).toBe(200);
      await refused(ops, { cookie: otherAdmin.cookie });
      await refused(ops, bearer(other.adminKey));
    } finally {
      await ops.close();
    }
  });
});
