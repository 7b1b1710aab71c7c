import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approveConsent,
  callbackPath,
  createPortal,
  type OAuthEmulators,
  startOAuthEmulators,
} from '../connections/oauth-testing';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const PORTAL = 62_001;
const EVENT_TIME = '2026-11-30T09:00:00.000Z';

/**
 * Every admin write and its audit entry commit together. A trigger makes PostgreSQL refuse
 * every audit entry, so each route fails after its own writes have run: it must answer an
 * error and leave nothing of them behind.
 */
describe('audited writes commit with their audit entry or not at all', () => {
  let oauth: OAuthEmulators;
  let t: TestApp;
  let ws: { workspaceId: string; adminKey: string };
  let live: string;
  let dryRun: string;
  let paused: string;
  let newToken: string;
  let otherPortalToken: string;
  let letter: string;
  let discardable: string;
  let bulkLetter: string;
  let revocable: string;

  const call = (
    method: 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse> =>
    t.app.inject({ method, url, headers: bearer(ws.adminKey), ...(payload ? { payload } : {}) });

  /** A private app token of the portal (made in the emulator first): what proves a connection's account. */
  const portals = new Set<number>();
  const privateAppToken = async (portalId: number): Promise<string> => {
    if (!portals.has(portalId)) await createPortal(oauth.emulators, portalId);
    portals.add(portalId);
    const res = await fetch(
      `${oauth.emulators.hubspotUrl}/_emulator/hubspot/portals/${portalId}/private-apps`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(res.status).toBeLessThan(300);
    return ((await res.json()) as { accessToken: string }).accessToken;
  };

  const connect = async (portalId: number, dryRunFlag = false): Promise<string> => {
    const res = await call('POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: String(portalId),
      credentials: { privateAppToken: await privateAppToken(portalId) },
      dryRun: dryRunFlag,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };

  const seedLogLetter = async (connectionId: string, eventKey: string, offset: number): Promise<string> => {
    const payload = {
      partition: 3,
      offset,
      workspaceId: ws.workspaceId,
      connectionId,
      eventKey,
      entityType: 'person',
      externalId: 'contact-1',
      op: 'upsert',
      fields: { email: 'ana@example.com' },
      fieldTimes: { email: EVENT_TIME },
      eventTime: EVENT_TIME,
      ingestedAt: EVENT_TIME,
      providerVersion: '42',
      origin: null,
    };
    const rows = await t.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id, event_key,
                               payload, error_code, error_message, attempts)
      VALUES (gen_random_uuid(), ${ws.workspaceId}::uuid, 'log', 'sync', 3, ${offset}, ${connectionId}::uuid, ${eventKey},
              ${JSON.stringify(payload)}::jsonb, 'HandlerFailed', 'boom', 5)
      RETURNING id::text`;
    return rows[0]!.id;
  };

  /**
   * Everything an audited route of this workspace may write, as text to compare. The
   * workspace's own connection (which its edits, identity operations and policy changes are
   * logged under) is made on first use, before a write's transaction: no part of the write.
   */
  const state = async (): Promise<Record<string, unknown>> => {
    const [connections, audit, replays, policies, revisions, letters, events, staged, keys] =
      await Promise.all([
        t.prisma.connection.findMany({
          where: { workspaceId: ws.workspaceId, provider: { not: 'syncline' } },
          orderBy: { id: 'asc' },
          select: {
            id: true,
            status: true,
            dryRun: true,
            cursors: true,
            credentialsCiphertext: true,
            fieldMappings: true,
            updatedAt: true,
          },
        }),
        t.prisma.auditLog.count({ where: { workspaceId: ws.workspaceId } }),
        t.prisma.replay.count({ where: { workspaceId: ws.workspaceId } }),
        t.prisma.$queryRaw`SELECT * FROM field_policy ORDER BY 1, 2`,
        t.prisma.$queryRaw`SELECT (SELECT count(*) FROM field_policy_revision)::int AS policies,
                                (SELECT count(*) FROM connection_mapping_revision)::int AS mappings`,
        t.prisma.deadLetter.findMany({ orderBy: { id: 'asc' }, select: { id: true, status: true } }),
        t.prisma.$queryRaw`SELECT count(*)::int AS n FROM change_event`,
        t.prisma.$queryRaw`SELECT count(*)::int AS n FROM staged_change`,
        t.prisma.apiKey.findMany({
          where: { workspaceId: ws.workspaceId },
          orderBy: { id: 'asc' },
          select: { id: true, revokedAt: true },
        }),
      ]);
    return JSON.parse(
      JSON.stringify(
        { connections, audit, replays, policies, revisions, letters, events, staged, keys },
        (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value),
      ),
    ) as Record<string, unknown>;
  };

  const refuseAudit = (on: boolean) =>
    t.prisma.$executeRawUnsafe(`ALTER TABLE audit_log ${on ? 'ENABLE' : 'DISABLE'} TRIGGER audit_refused`);

  beforeAll(async () => {
    oauth = await startOAuthEmulators();
    await createPortal(oauth.emulators, PORTAL);
    t = await startTestApp('audited_writes', oauth.env);
    ws = await seedWorkspace(t.prisma, 'Acme');
    live = await connect(4711);
    dryRun = await connect(4712, true);
    paused = await connect(4713);
    newToken = await privateAppToken(4711);
    otherPortalToken = await privateAppToken(9999);
    await t.prisma.connection.update({ where: { id: paused }, data: { status: 'paused' } });
    letter = await seedLogLetter(live, 'contact-1:42', 7);
    discardable = await seedLogLetter(live, 'contact-2:42', 8);
    bulkLetter = await seedLogLetter(live, 'contact-3:42', 9);
    const key = await call('POST', '/api/v1/api-keys', { name: 'to revoke', role: 'sales' });
    expect(key.statusCode).toBe(201);
    revocable = key.json<{ id: string }>().id;
    await t.prisma.$executeRawUnsafe(`
      CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit entry refused (test)'; END $$`);
    await t.prisma.$executeRawUnsafe(`
      CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit()`);
    await refuseAudit(false);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await oauth?.close();
  });

  const routes: [string, () => Promise<LightMyRequestResponse>][] = [
    [
      'POST /api/v1/connections',
      () =>
        call('POST', '/api/v1/connections', {
          provider: 'hubspot',
          externalAccountId: '9999',
          credentials: { privateAppToken: otherPortalToken },
        }),
    ],
    [
      'PUT /api/v1/connections/:id/credentials',
      () =>
        call('PUT', `/api/v1/connections/${live}/credentials`, {
          credentials: { privateAppToken: newToken },
        }),
    ],
    ['POST /api/v1/connections/:id/resync', () => call('POST', `/api/v1/connections/${live}/resync`)],
    ['POST /api/v1/connections/:id/resume', () => call('POST', `/api/v1/connections/${paused}/resume`)],
    ['POST /api/v1/connections/:id/enable', () => call('POST', `/api/v1/connections/${dryRun}/enable`)],
    [
      'PUT /api/v1/connections/:id/mappings',
      () => call('PUT', `/api/v1/connections/${live}/mappings`, { mappings: [] }),
    ],
    [
      'PUT /api/v1/policies/:entityType',
      () => call('PUT', '/api/v1/policies/person', { fields: { jobTitle: { kind: 'manual' } } }),
    ],
    ['POST /api/v1/replays', () => call('POST', '/api/v1/replays', { from: 'beginning', mode: 'preview' })],
    ['POST /api/v1/dead-letters/:id/retry', () => call('POST', `/api/v1/dead-letters/${letter}/retry`)],
    [
      'POST /api/v1/dead-letters/:id/discard',
      () => call('POST', `/api/v1/dead-letters/${discardable}/discard`),
    ],
    [
      'POST /api/v1/dead-letters/bulk',
      () => call('POST', '/api/v1/dead-letters/bulk', { action: 'discard', ids: [bulkLetter] }),
    ],
    ['POST /api/v1/api-keys', () => call('POST', '/api/v1/api-keys', { name: 'script', role: 'admin' })],
    ['DELETE /api/v1/api-keys/:id', () => call('DELETE', `/api/v1/api-keys/${revocable}`)],
    ['POST /api/v1/connections/:id/pause', () => call('POST', `/api/v1/connections/${live}/pause`)],
    [
      'GET /api/v1/connections/oauth/hubspot/callback',
      async () => {
        const started = await call('POST', '/api/v1/connections/oauth/hubspot/start');
        expect(started.statusCode).toBe(201);
        const redirect = await approveConsent(started.json<{ authorizeUrl: string }>().authorizeUrl, {
          portalId: PORTAL,
        });
        return t.app.inject({ method: 'GET', url: callbackPath(redirect) });
      },
    ],
    // Last: the control below runs them in this order, and a disconnect erases the dead letters.
    ['DELETE /api/v1/connections/:id', () => call('DELETE', `/api/v1/connections/${live}?data=erase`)],
  ];

  it.each(routes)('%s: refused audit entry, nothing written', async (_route, run) => {
    const before = await state();
    await refuseAudit(true);
    try {
      const res = await run();
      expect(res.statusCode, res.body).toBe(500);
    } finally {
      await refuseAudit(false);
    }
    expect(await state()).toEqual(before);
  });

  it('with the audit entry accepted, each of these routes writes and is audited', async () => {
    // A control: the failures above came from the trigger, not from requests that could not succeed.
    for (const [route, run] of routes) {
      const audited = await t.prisma.auditLog.count({ where: { workspaceId: ws.workspaceId } });
      const res = await run();
      expect(res.statusCode, `${route}: ${res.body}`).toBeLessThan(300);
      expect(await t.prisma.auditLog.count({ where: { workspaceId: ws.workspaceId } }), route).toBe(
        audited + 1,
      );
    }
  });
});
