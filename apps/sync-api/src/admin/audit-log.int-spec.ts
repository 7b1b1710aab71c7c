import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts } from '../testing/provider-accounts';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface EntryBody {
  id: string;
  action: string;
  targetType: string;
  targetId: string | null;
  actor: { kind: string; id: string; label: string | null; keyId: string | null; userId: string | null };
  details: Record<string, unknown>;
  createdAt: string;
}
interface PageBody {
  data: EntryBody[];
  nextCursor: string | null;
}

describe('audit log', () => {
  let t: TestApp;
  let accounts: ProviderAccounts;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let connectionId: string;
  let letterId: string;
  let queueLetterId: string;
  // Every response body this file sees, to prove that no token ever leaves the API.
  const bodies: string[] = [];
  // Two private app tokens of one portal in the emulator: the API proves each names the portal.
  let firstToken: string;
  let secondToken: string;

  const call = async (
    key: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse> => {
    const res = await t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
    bodies.push(res.body);
    return res;
  };
  const auditLog = async (key: string, query = ''): Promise<PageBody> => {
    const res = await call(key, 'GET', `/api/v1/audit-log${query}`);
    expect(res.statusCode).toBe(200);
    return res.json<PageBody>();
  };
  const adminOf = async (workspaceId: string) => {
    const key = await t.prisma.apiKey.findFirstOrThrow({
      where: { workspaceId },
      select: { id: true, userId: true },
    });
    expect(key.userId).not.toBeNull();
    return key;
  };

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('audit_log', accounts.env);
    firstToken = (await accounts.hubspot(4711)).privateAppToken;
    secondToken = (await accounts.hubspot(4711)).privateAppToken;
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  it('records a connection created and its credentials replaced, without the credentials', async () => {
    const created = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '4711',
      credentials: { privateAppToken: firstToken },
    });
    expect(created.statusCode).toBe(201);
    connectionId = created.json<{ id: string }>().id;
    const replaced = await call(a.adminKey, 'PUT', `/api/v1/connections/${connectionId}/credentials`, {
      credentials: { privateAppToken: secondToken },
    });
    expect(replaced.statusCode).toBe(200);

    const admin = await adminOf(a.workspaceId);
    const { data, nextCursor } = await auditLog(a.adminKey);
    expect(nextCursor).toBeNull();
    expect(data).toEqual([
      {
        id: expect.any(String),
        action: 'connection.credentials_replaced',
        targetType: 'connection',
        targetId: connectionId,
        actor: {
          kind: 'apiKey',
          id: admin.id,
          label: 'initial admin key',
          keyId: admin.id,
          userId: admin.userId,
        },
        details: { status: 'pending', proof: 'hubspot_account_info' },
        createdAt: expect.any(String),
      },
      {
        id: expect.any(String),
        action: 'connection.created',
        targetType: 'connection',
        targetId: connectionId,
        actor: {
          kind: 'apiKey',
          id: admin.id,
          label: 'initial admin key',
          keyId: admin.id,
          userId: admin.userId,
        },
        details: {
          provider: 'hubspot',
          externalAccountId: '4711',
          dryRun: false,
          proof: 'hubspot_account_info',
        },
        createdAt: expect.any(String),
      },
    ]);
  });

  it('records a dead letter retried and one discarded, and nothing for a refused retry', async () => {
    const seed = async (source: string, payload: object) => {
      const rows = await t.prisma.$queryRaw<{ id: string }[]>`
        INSERT INTO dead_letter (id, workspace_id, source, connection_id, event_key, payload, error_code, error_message)
        VALUES (gen_random_uuid(), ${a.workspaceId}::uuid, ${source}, ${connectionId}::uuid, 'contact-1:7',
                ${JSON.stringify(payload)}::jsonb, 'HandlerFailed', 'boom')
        RETURNING id::text`;
      return rows[0]!.id;
    };
    letterId = await seed('log', {
      workspaceId: a.workspaceId,
      connectionId,
      eventKey: 'contact-1:7',
      entityType: 'person',
      externalId: 'contact-1',
      op: 'upsert',
      fields: { email: 'ana@example.com' },
      fieldTimes: {},
      eventTime: '2026-11-30T09:00:00.000Z',
      providerVersion: null,
      origin: null,
    });
    queueLetterId = await seed('queue', { queue: 'pull', jobId: 'pull.1' });

    expect((await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letterId}/retry`)).statusCode).toBe(200);
    expect((await call(a.adminKey, 'POST', `/api/v1/dead-letters/${queueLetterId}/retry`)).statusCode).toBe(
      409,
    );
    expect((await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letterId}/retry`)).statusCode).toBe(409);
    expect((await call(a.adminKey, 'POST', `/api/v1/dead-letters/${queueLetterId}/discard`)).statusCode).toBe(
      200,
    );

    const { data } = await auditLog(a.adminKey);
    expect(data.map((e) => [e.action, e.targetId])).toEqual([
      ['dead_letter.discarded', queueLetterId],
      ['dead_letter.retried', letterId],
      ['connection.credentials_replaced', connectionId],
      ['connection.created', connectionId],
    ]);
    expect(data[0]).toMatchObject({ targetType: 'dead_letter', details: { source: 'queue' } });
    expect(data[1]).toMatchObject({
      targetType: 'dead_letter',
      details: { source: 'log', eventKey: 'contact-1:7#retry-1', partition: expect.any(Number) },
    });
  });

  it('pages newest first by cursor', async () => {
    const all = (await auditLog(a.adminKey)).data.map((e) => e.id);
    const seen: string[] = [];
    let query = '?limit=3';
    for (let page = 0; page < 5; page++) {
      const body = await auditLog(a.adminKey, query);
      seen.push(...body.data.map((e) => e.id));
      if (body.nextCursor === null) break;
      query = `?limit=3&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    expect(seen).toEqual(all);
    expect(seen).toHaveLength(4);
  });

  it('shows each workspace only its own entries', async () => {
    const created = await call(b.adminKey, 'POST', '/api/v1/connections', {
      provider: 'gmail',
      externalAccountId: 'bo@globex.test',
      credentials: (await accounts.google('bo@globex.test')).oauth,
    });
    expect(created.statusCode).toBe(201);
    const { data } = await auditLog(b.adminKey);
    expect(data.map((e) => [e.action, e.targetId])).toEqual([
      ['connection.created', created.json<{ id: string }>().id],
    ]);
    expect((await auditLog(a.adminKey)).data).toHaveLength(4);
  });

  it('is for admins only, and refuses a bad cursor', async () => {
    const sales = await call(a.adminKey, 'POST', '/api/v1/api-keys', { name: 'rep', role: 'sales' });
    const forbidden = await call(sales.json<{ key: string }>().key, 'GET', '/api/v1/audit-log');
    expect(forbidden.statusCode).toBe(403);
    const badCursor = await call(a.adminKey, 'GET', '/api/v1/audit-log?cursor=bm9wZQ');
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
  });

  it('records API keys created and revoked, with name and role and never the key', async () => {
    const created = await call(a.adminKey, 'POST', '/api/v1/api-keys', {
      name: 'nightly export',
      role: 'admin',
    });
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json<{ id: string; key: string }>();
    expect((await call(a.adminKey, 'DELETE', `/api/v1/api-keys/${id}`)).statusCode).toBe(204);
    // Revoking again changes nothing, and records nothing.
    expect((await call(a.adminKey, 'DELETE', `/api/v1/api-keys/${id}`)).statusCode).toBe(204);
    const { data } = await auditLog(a.adminKey, '?limit=2');
    const admin = await adminOf(a.workspaceId);
    expect(data.map((e) => [e.action, e.targetType, e.targetId, e.details, e.actor.id])).toEqual([
      ['api_key.revoked', 'api_key', id, { name: 'nightly export', role: 'admin' }, admin.id],
      ['api_key.created', 'api_key', id, { name: 'nightly export', role: 'admin' }, admin.id],
    ]);
    const stored = await t.prisma.$queryRaw<
      { row: string }[]
    >`SELECT row_to_json(l)::text AS row FROM audit_log l`;
    expect(stored.map((r) => r.row).join('\n')).not.toContain(key.slice(key.lastIndexOf('_') + 1));
  });

  it('filters by action, alone or with the actor, and refuses an unknown action', async () => {
    const byAction = await auditLog(a.adminKey, '?action=api_key.created');
    expect(byAction.data.map((e) => e.details.name)).toEqual(['nightly export', 'rep']);
    expect(byAction.data.every((e) => e.action === 'api_key.created')).toBe(true);

    const letters = await auditLog(a.adminKey, '?action=dead_letter.retried&limit=1');
    expect(letters.data.map((e) => e.targetId)).toEqual([letterId]);
    expect(letters.nextCursor).toBeNull();

    const admin = await adminOf(a.workspaceId);
    const both = await auditLog(a.adminKey, `?action=connection.created&actorId=${admin.id}`);
    expect(both.data.map((e) => [e.action, e.targetId])).toEqual([['connection.created', connectionId]]);
    const otherActor = await auditLog(
      a.adminKey,
      `?action=connection.created&actorId=${admin.userId}&actorKind=member`,
    );
    expect(otherActor.data).toEqual([]);
    // Another workspace's entries of that action stay out.
    expect((await auditLog(b.adminKey, '?action=api_key.created')).data).toEqual([]);

    for (const action of ['connection.exploded', 'CONNECTION.CREATED', '']) {
      const res = await call(a.adminKey, 'GET', `/api/v1/audit-log?action=${encodeURIComponent(action)}`);
      expect(res.statusCode, action).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
    }
  });

  it('never holds, returns or logs a token', async () => {
    const stored = await t.prisma.$queryRaw<
      { row: string }[]
    >`SELECT row_to_json(l)::text AS row FROM audit_log l`;
    // A's 4, B's connection, and A's three key entries (the sales key, one created and revoked).
    expect(stored).toHaveLength(8);
    const everything = [...bodies, ...stored.map((s) => s.row), ...t.logs].join('\n');
    for (const secret of [firstToken, secondToken]) expect(everything).not.toContain(secret);
    expect([...bodies, ...stored.map((s) => s.row)].join('\n')).not.toMatch(
      /privateAppToken|refreshToken|ciphertext/i,
    );
  });
});
