import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts, type TestGoogleAccount, type TestPortal } from '../testing/provider-accounts';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const VIEW_KEYS = [
  'accountAddress',
  'createdAt',
  'credentialsVerifiedAt',
  'displayName',
  'dryRun',
  'externalAccountId',
  'hasCredentials',
  'id',
  'provider',
  'state',
  'status',
  'statusReason',
  'updatedAt',
  'watermark',
];

interface ConnectionBody {
  id: string;
  provider: string;
  hasCredentials: boolean;
}

describe('connections', () => {
  let t: TestApp;
  let accounts: ProviderAccounts;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  // Every response body this file sees, to prove that no token ever leaves the API.
  const bodies: string[] = [];
  // Tokens the emulators recognise: a connection's account is proven by its credentials.
  let portal: TestPortal;
  let rep: TestGoogleAccount;

  const call = async (
    key: string,
    method: 'GET' | 'POST',
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse> => {
    const res = await t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
    bodies.push(res.body);
    return res;
  };

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('connections', accounts.env);
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    portal = await accounts.hubspot(4711);
    rep = await accounts.google('rep@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  let hubspotId: string;

  it('an admin connects HubSpot; the row holds ciphertext that opens to the credentials', async () => {
    const { privateAppToken } = portal;
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '4711',
      displayName: 'Acme portal',
      credentials: { privateAppToken },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json<ConnectionBody>();
    expect(Object.keys(body).sort()).toEqual(VIEW_KEYS);
    expect(body).toMatchObject({
      provider: 'hubspot',
      externalAccountId: '4711',
      displayName: 'Acme portal',
      status: 'pending',
      statusReason: null,
      watermark: null,
      hasCredentials: true,
      credentialsVerifiedAt: expect.any(String),
    });
    hubspotId = body.id;

    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: hubspotId } });
    expect(row.workspaceId).toBe(a.workspaceId);
    expect(row.credentialsKeyId).toBe('test');
    const ciphertext = Buffer.from(row.credentialsCiphertext!);
    expect(ciphertext.includes(Buffer.from(privateAppToken))).toBe(false);
    expect(ciphertext.toString('latin1')).not.toContain('privateAppToken');
    const opened = t.keyring.open({ keyId: row.credentialsKeyId!, ciphertext }, `connection:${hubspotId}`);
    expect(JSON.parse(opened)).toEqual({ privateAppToken });
    // Bound to its row: the same ciphertext does not open as another connection's.
    expect(() => t.keyring.open({ keyId: 'test', ciphertext }, `connection:${b.workspaceId}`)).toThrow();
  });

  it('stores Google providers with their hyphenated wire names', async () => {
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'google-calendar',
      externalAccountId: 'rep@acme.test',
      credentials: { ...rep.oauth, expiresAt: '2026-12-01T00:00:00Z' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json<ConnectionBody & { accountAddress: string | null }>();
    expect(body.provider).toBe('google-calendar');
    // Whose calendar it is, as Google's userinfo named it: what decides whose meetings it is owed.
    expect(body.accountAddress).toBe('rep@acme.test');
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: body.id } });
    expect(row.provider).toBe('google_calendar');
    expect(Buffer.from(row.credentialsCiphertext!).includes(Buffer.from(rep.oauth.refreshToken))).toBe(false);
  });

  it('lists and reads connections without credentials, ciphertext or key id', async () => {
    const list = await call(a.adminKey, 'GET', '/api/v1/connections');
    expect(list.statusCode).toBe(200);
    const { data } = list.json<{ data: ConnectionBody[] }>();
    expect(data.map((c) => c.provider)).toEqual(['hubspot', 'google-calendar']);
    for (const connection of data) expect(Object.keys(connection).sort()).toEqual(VIEW_KEYS);

    const one = await call(a.adminKey, 'GET', `/api/v1/connections/${hubspotId}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: hubspotId, provider: 'hubspot', hasCredentials: true });
  });

  it("another workspace's key gets 404 for the connection and does not see it listed", async () => {
    const res = await call(b.adminKey, 'GET', `/api/v1/connections/${hubspotId}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    // Exactly what a connection that exists nowhere gets: existence is not revealed.
    const missing = await call(b.adminKey, 'GET', '/api/v1/connections/00000000-0000-4000-8000-000000000000');
    expect(missing.statusCode).toBe(404);
    expect(missing.json<{ error: { message: string } }>().error.message).toBe(
      res
        .json<{ error: { message: string } }>()
        .error.message.replace(hubspotId, '00000000-0000-4000-8000-000000000000'),
    );

    const list = await call(b.adminKey, 'GET', '/api/v1/connections');
    expect(list.json()).toEqual({ data: [] });
  });

  it('409 conflict for the same provider account twice in a workspace, but not across workspaces', async () => {
    const again = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '4711',
      credentials: { privateAppToken: (await accounts.hubspot(4711)).privateAppToken },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: { code: 'conflict', message: expect.any(String) } });

    const elsewhere = await call(b.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '4711',
      credentials: { privateAppToken: (await accounts.hubspot(4711)).privateAppToken },
    });
    expect(elsewhere.statusCode).toBe(201);
  });

  it('400 validation_failed naming each bad field', async () => {
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'salesforce',
      credentials: {},
    });
    expect(res.statusCode).toBe(400);
    const { error } = res.json<{ error: { code: string; message: string } }>();
    expect(error.code).toBe('validation_failed');
    expect(error.message).toContain('provider');
    expect(error.message).toContain('externalAccountId');
    expect(error.message).toContain('credentials');
    expect(error.message).not.toContain('salesforce');

    const noBody = await call(a.adminKey, 'POST', '/api/v1/connections');
    expect(noBody.statusCode).toBe(400);
    expect(noBody.json<{ error: { code: string } }>().error.code).toBe('validation_failed');

    const badId = await call(a.adminKey, 'GET', '/api/v1/connections/not-a-uuid');
    expect(badId.statusCode).toBe(400);
    expect(badId.json<{ error: { message: string } }>().error.message).toMatch(/^invalid request: id: /);
  });

  it('400 in the error shape for a body that is not JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/connections',
      headers: { ...bearer(a.adminKey), 'content-type': 'application/json' },
      payload: '{"provider": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('bad_request');
  });

  it('never returns or logs a token', async () => {
    const everything = [...bodies, ...t.logs].join('\n');
    for (const secret of [portal.privateAppToken, rep.oauth.accessToken, rep.oauth.refreshToken])
      expect(everything).not.toContain(secret);
    expect(bodies.join('\n')).not.toMatch(/ciphertext|credentialsKeyId/i);
  });
});
