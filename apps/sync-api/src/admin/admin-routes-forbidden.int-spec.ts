import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestsAimedAt } from '../openapi/testing/aimed-requests';
import { errorCode, send } from '../openapi/testing/api-call';
import { fetchOpenApiDocument, listOperations, type Operation } from '../openapi/testing/openapi-operations';
import { OTHER_AUTH, PUBLIC, SESSION_ONLY } from '../openapi/testing/route-lists';
import { ProviderAccounts } from '../testing/provider-accounts';
import { type SignedIn, signInAs } from '../testing/sign-in';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { AUDIT_ACTIONS, type AuditAction } from './audit-log.schemas';

/**
 * Routes that document a 403 for a reason other than the role, each with why: a salesperson
 * may call them. Kept explicit, so that a new 403 is either admin-only or named here.
 */
const NOT_ADMIN_ONLY: Record<string, string> = {
  // None today: every documented 403 is the admin role's (a CSRF refusal is not documented per route).
};

/**
 * Audited actions the browser app cannot trigger with a member's session here, each with why
 * (they are audited, and tested, elsewhere).
 */
const NOT_FROM_A_SESSION: Partial<Record<AuditAction, string>> = {
  'connection.oauth_connected':
    "the provider's redirect to the OAuth callback records it (oauth.int-spec, audited-writes)",
};

const EVENT_TIME = '2026-11-30T09:00:00.000Z';

describe('admin routes and a session', () => {
  let t: TestApp;
  let accounts: ProviderAccounts;
  let ws: { workspaceId: string; adminKey: string };
  let sales: SignedIn;
  let admin: SignedIn;
  let adminOnly: Operation[];

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('admin_routes_session', accounts.env);
    ws = await seedWorkspace(t.prisma, 'Acme');
    sales = await signInAs(t.app, { workspaceId: ws.workspaceId, email: 'rep@acme.test', role: 'sales' });
    admin = await signInAs(t.app, {
      workspaceId: ws.workspaceId,
      email: 'ops@acme.test',
      role: 'admin',
      name: 'Olga Ops',
    });
    const operations = listOperations(await fetchOpenApiDocument(t.app));
    adminOnly = operations.filter(
      (op) =>
        op.statuses.includes(403) &&
        !OTHER_AUTH.includes(op.key) &&
        !PUBLIC.includes(op.key) &&
        !(op.key in NOT_ADMIN_ONLY),
    );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  describe("a sales member's session", () => {
    it('finds every named exception in the document, documenting a 403', async () => {
      const operations = listOperations(await fetchOpenApiDocument(t.app));
      for (const key of Object.keys(NOT_ADMIN_ONLY))
        expect(operations.find((op) => op.key === key)?.statuses, key).toContain(403);
      // The admin routes of every area are among them.
      const keys = adminOnly.map((op) => op.key);
      for (const key of [
        'GET /api/v1/dead-letters',
        'POST /api/v1/dead-letters/bulk',
        'GET /api/v1/audit-log',
        'POST /api/v1/api-keys',
        'DELETE /api/v1/api-keys/{id}',
        'POST /api/v1/members',
        'PATCH /api/v1/members/{id}',
        'DELETE /api/v1/members/{id}',
        'POST /api/v1/connections/{id}/pause',
        'PUT /api/v1/policies/{entityType}',
        'PUT /api/v1/workspace/time-zone',
        'POST /api/v1/replays',
      ])
        expect(keys, key).toContain(key);
      expect(keys.some((key) => SESSION_ONLY.includes(key))).toBe(false);
    });

    it('is answered 403 forbidden by every admin-only route, with its CSRF token and Origin in order', async () => {
      const wrong: string[] = [];
      for (const op of adminOnly) {
        const [request] = requestsAimedAt(op, [randomUUID()]);
        if (request === undefined) throw new Error(`no request for ${op.key}`);
        const res = await send(t.app, {
          method: op.method,
          url: request.url,
          headers: { ...request.headers, ...sales.writeHeaders },
          ...(request.payload === undefined ? {} : { payload: request.payload as object }),
        });
        if (res.status !== 403 || errorCode(res.text) !== 'forbidden')
          wrong.push(`${op.key}: ${res.status} ${res.text.slice(0, 200)}`);
      }
      expect(wrong).toEqual([]);
      expect(adminOnly.length).toBeGreaterThan(30);
      // Nothing was done on the salesperson's behalf.
      expect(await t.prisma.auditLog.count({ where: { workspaceId: ws.workspaceId } })).toBe(0);
    });

    it('is the role, not the session: an admin session is let through on the same reads', async () => {
      const reads = adminOnly.filter((op) => op.method === 'GET' && !op.streams);
      expect(reads.length).toBeGreaterThan(5);
      for (const op of reads) {
        const [request] = requestsAimedAt(op, [randomUUID()]);
        const res = await send(t.app, {
          method: 'GET',
          url: request!.url,
          headers: { ...request!.headers, cookie: admin.cookie },
        });
        expect(res.status, `${op.key}: ${res.text.slice(0, 200)}`).not.toBe(403);
        expect(res.status, op.key).toBeLessThan(500);
      }
    });
  });

  describe("an admin's writes from a session", () => {
    const call = async (
      method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      payload?: object,
      headers: Record<string, string> = {},
    ): Promise<LightMyRequestResponse> => {
      const res = await t.app.inject({
        method,
        url,
        headers: { ...admin.writeHeaders, ...headers },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res;
    };
    const connect = async (dryRun: boolean): Promise<string> => {
      const portal = await accounts.hubspot();
      const res = await call('POST', '/api/v1/connections', {
        provider: 'hubspot',
        externalAccountId: portal.externalAccountId,
        credentials: { privateAppToken: portal.privateAppToken },
        dryRun,
      });
      return res.json<{ id: string }>().id;
    };
    const seedLetter = async (connectionId: string, eventKey: string): Promise<string> => {
      const payload = {
        workspaceId: ws.workspaceId,
        connectionId,
        eventKey,
        entityType: 'person',
        externalId: eventKey.split(':')[0],
        op: 'upsert',
        fields: { email: 'ana@example.com' },
        fieldTimes: {},
        eventTime: EVENT_TIME,
        providerVersion: null,
        origin: null,
      };
      const rows = await t.prisma.$queryRaw<{ id: string }[]>`
        INSERT INTO dead_letter (id, workspace_id, source, connection_id, event_key, payload, error_code, error_message)
        VALUES (gen_random_uuid(), ${ws.workspaceId}::uuid, 'log', ${connectionId}::uuid, ${eventKey},
                ${JSON.stringify(payload)}::jsonb, 'HandlerFailed', 'boom')
        RETURNING id::text`;
      return rows[0]!.id;
    };

    it('are each audited with the member as actor, for every action the app can trigger', async () => {
      const live = await connect(false);
      const dryRun = await connect(true);
      const portal = await t.prisma.connection.findUniqueOrThrow({
        where: { id: live },
        select: { externalAccountId: true },
      });
      const sameAccount = await accounts.hubspot(Number(portal.externalAccountId));
      await call('PUT', `/api/v1/connections/${live}/credentials`, {
        credentials: { privateAppToken: sameAccount.privateAppToken },
      });
      await call('POST', `/api/v1/connections/${live}/pause`);
      await call('POST', `/api/v1/connections/${live}/resume`);
      await call('POST', `/api/v1/connections/${live}/resync`);
      await call('POST', `/api/v1/connections/${dryRun}/enable`);
      await call('PUT', `/api/v1/connections/${live}/mappings`, { mappings: [] });
      await call('PUT', '/api/v1/policies/person', { fields: { jobTitle: { kind: 'manual' } } });
      await call('POST', '/api/v1/replays', { from: 'beginning', mode: 'preview' });
      await call('PUT', '/api/v1/workspace/time-zone', { timeZone: 'Europe/Paris' });
      const [retried, discarded, inBulk] = [
        await seedLetter(live, 'contact-1:1'),
        await seedLetter(live, 'contact-2:1'),
        await seedLetter(live, 'contact-3:1'),
      ];
      await call('POST', `/api/v1/dead-letters/${retried}/retry`);
      await call('POST', `/api/v1/dead-letters/${discarded}/discard`);
      const bulk = await call('POST', '/api/v1/dead-letters/bulk', { action: 'discard', ids: [inBulk] });
      expect(bulk.json()).toMatchObject({ settled: 1, failed: 0 });
      const invited = await call('POST', '/api/v1/members', { email: 'new@acme.test', role: 'sales' });
      const memberId = invited.json<{ id: string }>().id;
      await call('PATCH', `/api/v1/members/${memberId}`, { role: 'admin' });
      await call('DELETE', `/api/v1/members/${memberId}`);
      const key = await call('POST', '/api/v1/api-keys', { name: 'export script', role: 'sales' });
      await call('DELETE', `/api/v1/api-keys/${key.json<{ id: string }>().id}`);
      await call('DELETE', `/api/v1/connections/${live}?data=keep`);

      const entries = await t.prisma.auditLog.findMany({
        where: { workspaceId: ws.workspaceId },
        select: { action: true, actorUserId: true, actorKeyId: true },
      });
      for (const entry of entries)
        expect(entry, entry.action).toMatchObject({
          actorUserId: admin.memberId,
          actorKeyId: null,
        });
      const expected = (Object.keys(AUDIT_ACTIONS) as AuditAction[]).filter(
        (a) => !(a in NOT_FROM_A_SESSION),
      );
      expect([...new Set(entries.map((e) => e.action))].sort()).toEqual(expected.sort());

      // The API shows them as the member's, by name, and finds them by that member.
      const page = await t.app.inject({
        method: 'GET',
        url: `/api/v1/audit-log?limit=200&actorKind=member&actorId=${admin.memberId}`,
        headers: { cookie: admin.cookie },
      });
      expect(page.statusCode).toBe(200);
      const data = page.json<{
        data: { action: string; actor: { kind: string; id: string; label: string } }[];
      }>().data;
      expect(data).toHaveLength(entries.length);
      for (const entry of data)
        expect(entry.actor, entry.action).toMatchObject({
          kind: 'member',
          id: admin.memberId,
          label: 'Olga Ops',
        });
      // An API key's entries are not the member's.
      const byKey = await t.app.inject({
        method: 'GET',
        url: `/api/v1/audit-log?actorKind=member&actorId=${sales.memberId}`,
        headers: bearer(ws.adminKey),
      });
      expect(byKey.json<{ data: unknown[] }>().data).toEqual([]);
    }, 60_000);
  });
});
