import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts } from '../testing/provider-accounts';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface StateBody {
  id: string;
  status: string;
  statusReason: string | null;
  hasCredentials: boolean;
  state: {
    status: string;
    reason: string | null;
    backfill: { seen: number; estimatedTotal: number | null };
    lag: { events: number };
    watermark: string | null;
    watermarkDelaySeconds: number | null;
    lastSuccessAt: string | null;
    lastErrorCode: string | null;
  };
}

describe('connection state and credentials', () => {
  let t: TestApp;
  let accounts: ProviderAccounts;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let hubspotId: string;
  let otherId: string;
  const bodies: string[] = [];
  // Tokens the emulator recognises for the portal of each connection (its account is proven by them).
  let newToken: string;
  const tokenOf = async (portalId: string) => (await accounts.hubspot(Number(portalId))).privateAppToken;

  const call = async (key: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const res: LightMyRequestResponse = await t.app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload ? { payload } : {}),
    });
    bodies.push(res.body);
    return res;
  };
  const connect = async (externalAccountId: string): Promise<string> => {
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId,
      credentials: { privateAppToken: await tokenOf(externalAccountId) },
    });
    expect(res.statusCode).toBe(201);
    return res.json<{ id: string }>().id;
  };

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('connection_state', accounts.env);
    newToken = await tokenOf('4711');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    const sales = await call(a.adminKey, 'POST', '/api/v1/api-keys', { name: 'rep', role: 'sales' });
    salesKey = sales.json<{ key: string }>().key;
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  it('a new connection is pending with empty state, and its first pull is queued', async () => {
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '4711',
      credentials: { privateAppToken: await tokenOf('4711') },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json<StateBody>();
    hubspotId = body.id;
    expect(body.status).toBe('pending');
    expect(body.state).toEqual({
      status: 'pending',
      reason: null,
      backfill: { seen: 0, estimatedTotal: null },
      lag: { events: 0 },
      watermark: null,
      watermarkDelaySeconds: null,
      lastSuccessAt: null,
      lastErrorCode: null,
    });
    const job = await t.pullQueue.getJob(`pull.${hubspotId}`);
    expect(job?.name).toBe('connection.pull');
    expect(job?.data).toEqual({ connectionId: hubspotId, reason: 'connection created' });
    otherId = await connect('5150');
  });

  it("shows progress, watermark delay and the lag behind the sync group's committed offsets", async () => {
    const watermark = new Date(Date.now() - 90_000);
    const lastSuccessAt = new Date(Date.now() - 5_000);
    await t.prisma.connection.update({
      where: { id: hubspotId },
      data: {
        status: 'backfilling',
        backfillSeen: 120,
        backfillTotal: 500,
        watermark,
        lastSuccessAt,
        lastErrorCode: 'RateLimited',
      },
    });
    // Partition 0: offsets 1-3 ours, 4 another connection's; the sync group committed 2.
    // Partition 1: offsets 1-2 ours; the sync group has committed nothing there.
    // Another group far behind must not count.
    const rows: [number, number, string][] = [
      [0, 1, hubspotId],
      [0, 2, hubspotId],
      [0, 3, hubspotId],
      [0, 4, otherId],
      [1, 1, hubspotId],
      [1, 2, hubspotId],
    ];
    for (const [partition, offset, connectionId] of rows) {
      await t.prisma.$executeRaw`
        INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                                  external_id, op, event_time)
        VALUES (${partition}, ${offset}, ${a.workspaceId}::uuid, ${connectionId}::uuid,
                ${`k-${partition}-${offset}`}, 'person', ${String(offset)}, 'upsert', now())`;
    }
    await t.prisma.$executeRaw`
      INSERT INTO consumer_offset (group_name, partition, committed_offset)
      VALUES ('sync', 0, 2), ('sync', 1, 0), ('audit', 0, 0)`;

    const res = await call(salesKey, 'GET', `/api/v1/connections/${hubspotId}`);
    expect(res.statusCode).toBe(200);
    const { state } = res.json<StateBody>();
    expect(state).toMatchObject({
      status: 'backfilling',
      reason: null,
      backfill: { seen: 120, estimatedTotal: 500 },
      lag: { events: 3 },
      watermark: watermark.toISOString(),
      lastSuccessAt: lastSuccessAt.toISOString(),
      lastErrorCode: 'RateLimited',
    });
    expect(state.watermarkDelaySeconds).toBeGreaterThanOrEqual(89);
    expect(state.watermarkDelaySeconds).toBeLessThan(120);

    const list = await call(a.adminKey, 'GET', '/api/v1/connections');
    const lags = Object.fromEntries(
      list.json<{ data: StateBody[] }>().data.map((c) => [c.id, c.state.lag.events]),
    );
    expect(lags).toEqual({ [hubspotId]: 3, [otherId]: 1 });

    await t.prisma.$executeRaw`UPDATE consumer_offset SET committed_offset = 10 WHERE group_name = 'sync'`;
    const caughtUp = await call(a.adminKey, 'GET', `/api/v1/connections/${hubspotId}`);
    expect(caughtUp.json<StateBody>().state.lag.events).toBe(0);
  });

  it('new credentials bring a needs_reauth connection back where it was, and queue a pull', async () => {
    const cases: [object, string][] = [
      [{ live: { contacts: '2026-11-01' } }, 'live'],
      [{ backfill: { after: '200' } }, 'backfilling'],
      [{}, 'pending'],
    ];
    for (const [cursors, expected] of cases) {
      await t.prisma.connection.update({
        where: { id: hubspotId },
        data: {
          status: 'needs_reauth',
          statusReason: 'token revoked',
          lastErrorCode: 'AuthRevoked',
          cursors,
        },
      });
      await t.pullQueue.obliterate({ force: true });
      const res = await call(a.adminKey, 'PUT', `/api/v1/connections/${hubspotId}/credentials`, {
        credentials: { privateAppToken: newToken },
      });
      expect(res.statusCode).toBe(200);
      const body = res.json<StateBody>();
      expect(body).toMatchObject({
        id: hubspotId,
        status: expected,
        statusReason: null,
        hasCredentials: true,
      });
      expect(body.state).toMatchObject({ status: expected, lastErrorCode: null });
      expect((await t.pullQueue.getJob(`pull.${hubspotId}`))?.data).toEqual({
        connectionId: hubspotId,
        reason: 'credentials replaced',
      });
    }
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: hubspotId } });
    const opened = t.keyring.open(
      { keyId: row.credentialsKeyId!, ciphertext: Buffer.from(row.credentialsCiphertext!) },
      `connection:${hubspotId}`,
    );
    expect(JSON.parse(opened)).toEqual({ privateAppToken: newToken });
  });

  it('leaves the status of a healthy or paused connection alone', async () => {
    await t.prisma.connection.update({ where: { id: otherId }, data: { status: 'paused' } });
    await t.pullQueue.obliterate({ force: true });
    const res = await call(a.adminKey, 'PUT', `/api/v1/connections/${otherId}/credentials`, {
      credentials: { privateAppToken: await tokenOf('5150') },
    });
    expect(res.json<StateBody>().status).toBe('paused');
    expect(await t.pullQueue.getJob(`pull.${otherId}`)).toBeUndefined();
  });

  it('only an admin of the workspace may replace credentials', async () => {
    const payload = { credentials: { privateAppToken: newToken } };
    const sales = await call(salesKey, 'PUT', `/api/v1/connections/${hubspotId}/credentials`, payload);
    expect(sales.statusCode).toBe(403);
    const foreign = await call(b.adminKey, 'PUT', `/api/v1/connections/${hubspotId}/credentials`, payload);
    expect(foreign.statusCode).toBe(404);
    const empty = await call(a.adminKey, 'PUT', `/api/v1/connections/${hubspotId}/credentials`, {
      credentials: {},
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
  });

  it('documents the state and the credentials route in OpenAPI', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    const doc = res.json<{ paths: Record<string, Record<string, unknown>> }>();
    expect(doc.paths['/api/v1/connections/{id}/credentials']?.put).toBeDefined();
    expect(res.body).toContain('watermarkDelaySeconds');
    for (const path of [
      '/api/v1/people',
      '/api/v1/people/{id}',
      '/api/v1/email-activities',
      '/webhooks/hubspot',
    ])
      expect(doc.paths[path], path).toBeDefined();
  });

  it('never returns or logs the credentials', async () => {
    const everything = [...bodies, ...t.logs].join('\n');
    expect(everything).not.toContain(newToken);
    expect(bodies.join('\n')).not.toMatch(/ciphertext|credentialsKeyId|privateAppToken/i);
  });
});
