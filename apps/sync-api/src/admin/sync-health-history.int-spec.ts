import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface HistoryBody {
  hours: number;
  from: string;
  to: string;
  bucketSeconds: number;
  connections: {
    id: string;
    provider: string;
    displayName: string | null;
    points: {
      at: string;
      lagEvents: number;
      watermarkDelaySeconds: number | null;
      pendingWrites: number;
      writesOk: number;
      writesFailed: Record<string, number>;
    }[];
  }[];
  workspace: {
    at: string;
    consumerLag: number;
    deadLettersOpen: number;
    writesOk: number;
    writesFailed: Record<string, number>;
    pendingWrites: number;
  }[];
}

const MINUTE = 60_000;

describe('sync health history', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let hubspot: string;
  let gmail: string;
  let globex: string;
  // Sample times on whole minutes, the newest a minute ago.
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const minutesAgo = (n: number) => new Date(now - n * MINUTE);

  const get = (url: string, key: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });
  const history = async (query: string, key = a.adminKey) => {
    const res = await get(`/api/v1/health/sync/history${query}`, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<HistoryBody>();
  };

  const sample = (
    workspaceId: string,
    connectionId: string,
    at: Date,
    over: Partial<{
      lagEvents: number;
      watermarkDelaySeconds: number | null;
      pendingWrites: number;
      writesOk: number;
      writesFailed: Record<string, number>;
      consumerLag: number;
      deadLettersOpen: number;
    }> = {},
  ) =>
    t.prisma.syncHealthSample.create({
      data: {
        workspaceId,
        connectionId,
        sampledAt: at,
        status: 'live',
        lagEvents: 0,
        watermarkDelaySeconds: 5,
        backfillSeen: 0,
        backfillTotal: null,
        pendingWrites: 0,
        writesOk: 0,
        writesFailed: {},
        deadLettersOpen: 0,
        consumerLag: 0,
        ...over,
      },
    });

  const connection = async (
    workspaceId: string,
    provider: 'hubspot' | 'gmail',
    account: string,
    name?: string,
  ) =>
    (
      await t.prisma.connection.create({
        data: {
          workspaceId,
          provider,
          externalAccountId: account,
          status: 'live',
          displayName: name ?? null,
        },
      })
    ).id;

  beforeAll(async () => {
    t = await startTestApp('sync_health_history');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    hubspot = await connection(a.workspaceId, 'hubspot', '4711', 'CRM A');
    gmail = await connection(a.workspaceId, 'gmail', 'ada@acme.test');
    globex = await connection(b.workspaceId, 'hubspot', '9000');

    for (const n of [3, 2, 1]) {
      await sample(a.workspaceId, hubspot, minutesAgo(n), {
        lagEvents: 10 * n,
        watermarkDelaySeconds: 30 * n,
        pendingWrites: n,
        writesOk: 4,
        writesFailed: n === 1 ? { ValidationFailed: 2, NotFound: 1 } : {},
        consumerLag: 7 * n,
        deadLettersOpen: 1,
      });
      await sample(a.workspaceId, gmail, minutesAgo(n), { watermarkDelaySeconds: null, consumerLag: 7 * n });
    }
    // Past 24 hours: not in a 24-hour history, in a 48-hour one.
    await sample(a.workspaceId, hubspot, minutesAgo(25 * 60), { lagEvents: 999 });
    // A connection erased since: its samples are not shown.
    await sample(a.workspaceId, '0190a000-0000-7000-8000-0000000000ee', minutesAgo(1), { lagEvents: 555 });
    // Another workspace's samples, with figures that would stand out.
    await sample(b.workspaceId, globex, minutesAgo(1), {
      lagEvents: 777,
      consumerLag: 888,
      deadLettersOpen: 9,
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("gives each connection's series in time order, and the workspace's consumer lag", async () => {
    const body = await history('?hours=1');
    expect(body.hours).toBe(1);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(3_600_000);
    expect(body.bucketSeconds).toBe(12);
    expect(body.connections.map((c) => [c.id, c.provider, c.displayName])).toEqual([
      [hubspot, 'hubspot', 'CRM A'],
      [gmail, 'gmail', null],
    ]);
    const [crm, mail] = body.connections;
    expect(
      crm!.points.map((p) => [p.lagEvents, p.watermarkDelaySeconds, p.pendingWrites, p.writesOk]),
    ).toEqual([
      [30, 90, 3, 4],
      [20, 60, 2, 4],
      [10, 30, 1, 4],
    ]);
    expect(crm!.points.map((p) => p.writesFailed)).toEqual([{}, {}, { ValidationFailed: 2, NotFound: 1 }]);
    expect(crm!.points.map((p) => Date.parse(p.at))).toEqual([3, 2, 1].map((n) => minutesAgo(n).getTime()));
    expect(mail!.points.map((p) => p.watermarkDelaySeconds)).toEqual([null, null, null]);
    expect(body.workspace).toEqual(
      [3, 2, 1].map((n) => ({
        at: minutesAgo(n).toISOString(),
        consumerLag: 7 * n,
        deadLettersOpen: 1,
        writesOk: 4,
        writesFailed: n === 1 ? { ValidationFailed: 2, NotFound: 1 } : {},
        pendingWrites: n,
      })),
    );
    // The workspace's series alone: the same figures, no series per connection.
    const workspace = await history('?hours=1&scope=workspace');
    expect(workspace.connections).toEqual([]);
    expect(workspace.workspace).toEqual(body.workspace);
  });

  it('downsamples a long range into wide buckets, the largest delay and the sum of writes', async () => {
    const body = await history('?hours=48');
    expect(body.bucketSeconds).toBe(600);
    const crm = body.connections.find((c) => c.id === hubspot)!;
    // The sample of 25 hours ago, then the three recent ones in one or two buckets.
    expect(crm.points[0]!.lagEvents).toBe(999);
    const recent = crm.points.slice(1);
    expect(recent.length).toBeLessThanOrEqual(2);
    expect(Math.max(...recent.map((p) => p.lagEvents))).toBe(30);
    expect(recent.reduce((sum, p) => sum + p.writesOk, 0)).toBe(12);
    expect(recent.reduce((sum, p) => sum + (p.writesFailed.ValidationFailed ?? 0), 0)).toBe(2);
  });

  it("answers one connection's series with connectionId", async () => {
    const body = await history(`?hours=24&connectionId=${gmail}`);
    expect(body.connections.map((c) => c.id)).toEqual([gmail]);
    // Three minutes' samples in buckets of 300 s: one or two points.
    const points = body.connections[0]!.points;
    expect(points.length).toBeGreaterThanOrEqual(1);
    expect(points.length).toBeLessThanOrEqual(2);
    // 24 hours by default.
    expect((await history('')).hours).toBe(24);
    expect((await history('')).connections[0]!.points.some((p) => p.lagEvents === 999)).toBe(false);
  });

  it("shows a workspace only its own samples; another's connection is not found", async () => {
    const body = await history('?hours=1', b.adminKey);
    expect(body.connections.map((c) => c.id)).toEqual([globex]);
    expect(body.connections[0]!.points.map((p) => p.lagEvents)).toEqual([777]);
    expect(body.workspace).toEqual([
      expect.objectContaining({ at: minutesAgo(1).toISOString(), consumerLag: 888, deadLettersOpen: 9 }),
    ]);

    const acme = await history('?hours=24');
    expect(JSON.stringify(acme)).not.toContain(globex);
    expect(acme.workspace.some((p) => p.consumerLag === 888)).toBe(false);

    const res = await get(`/api/v1/health/sync/history?connectionId=${globex}`, a.adminKey);
    expect(res.statusCode).toBe(404);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('not_found');
  });

  it('refuses hours it does not keep and malformed parameters with 400 validation_failed', async () => {
    for (const query of [
      '?hours=73',
      '?hours=0',
      '?hours=1.5',
      '?hours=day',
      '?connectionId=nope',
      '?scope=x',
    ]) {
      const res = await get(`/api/v1/health/sync/history${query}`, a.adminKey);
      expect(res.statusCode, query).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
    }
    const res = await get('/api/v1/health/sync/history?hours=73', a.adminKey);
    expect(res.json<{ error: { message: string } }>().error.message).toContain('at most 72 hours');
  });

  it('is for admins only', async () => {
    const sales = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    const res = await get('/api/v1/health/sync/history', sales);
    expect(res.statusCode).toBe(403);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('forbidden');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/health/sync/history' })).statusCode).toBe(401);
  });
});
