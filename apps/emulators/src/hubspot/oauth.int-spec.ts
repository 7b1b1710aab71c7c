import { Client } from '@hubspot/api-client';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';

type Failure = { code: number; body: Record<string, unknown> };

/**
 * `GET /account-info/v3/details` is in no spec file we keep; its answer as HubSpot documents it
 * (developers.hubspot.com, Account information API, "Retrieve account details"): every field required.
 */
const ACCOUNT_DETAILS_SCHEMA = new Ajv({ strict: true }).compile({
  type: 'object',
  required: [
    'portalId',
    'accountType',
    'timeZone',
    'companyCurrency',
    'additionalCurrencies',
    'utcOffset',
    'utcOffsetMilliseconds',
    'uiDomain',
    'dataHostingLocation',
  ],
  properties: {
    portalId: { type: 'integer' },
    accountType: { enum: ['APP_DEVELOPER', 'DEVELOPER_TEST', 'SANDBOX', 'STANDARD'] },
    timeZone: { type: 'string' },
    companyCurrency: { type: 'string' },
    additionalCurrencies: { type: 'array', items: { type: 'string' } },
    utcOffset: { type: 'string' },
    utcOffsetMilliseconds: { type: 'integer' },
    uiDomain: { type: 'string' },
    dataHostingLocation: { type: 'string' },
  },
});

async function failure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (e) {
    return e as Failure;
  }
  throw new Error('expected the call to fail');
}

describe('HubSpot emulator: OAuth through @hubspot/api-client', () => {
  let harness: HubspotHarness;
  let oauth: Client;
  const redirectUri = 'http://127.0.0.1:9/oauth/callback';

  beforeAll(async () => {
    harness = await HubspotHarness.start();
    oauth = new Client({ basePath: harness.url });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('connects: authorize redirects with a code, which the token endpoint exchanges', async () => {
    const portal = await harness.createPortal({ appId: 7001 });
    const authorize = new URL(`${harness.url}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: portal.clientId,
      redirect_uri: redirectUri,
      scope: 'crm.objects.contacts.read crm.objects.contacts.write',
      state: 'xyz',
      portalId: String(portal.portalId),
    }).toString();
    const redirect = await fetch(authorize, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code') ?? '';

    const tokens = await oauth.oauth.tokensApi.create(
      'authorization_code',
      code,
      redirectUri,
      portal.clientId,
      portal.clientSecret,
    );
    expect(tokens).toMatchObject({ tokenType: 'bearer', expiresIn: 1800 });
    const connected = harness.client(tokens.accessToken);
    await expect(connected.crm.contacts.basicApi.getPage()).resolves.toBeDefined();
    const info = await oauth.oauth.accessTokensApi.get(tokens.accessToken);
    expect(info).toMatchObject({ hubId: portal.portalId, appId: 7001 });

    // A code is good once.
    const again = await failure(
      oauth.oauth.tokensApi.create(
        'authorization_code',
        code,
        redirectUri,
        portal.clientId,
        portal.clientSecret,
      ),
    );
    expect(again.code).toBe(400);
    expect(again.body.status).toBe('BAD_AUTH_CODE');
  });

  it('asks which account to install into before it redirects, and Cancel declines', async () => {
    const first = await harness.createPortal({ appId: 7002 });
    const second = await harness.createPortal({ appId: 7002 });
    expect(second.clientId).toBe(first.clientId);
    const authorize = new URL(`${harness.url}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: first.clientId,
      redirect_uri: redirectUri,
      scope: 'crm.objects.contacts.read',
      state: 'pick',
    }).toString();
    const chooser = await fetch(authorize, { redirect: 'manual' });
    expect(chooser.status).toBe(200);
    const html = await chooser.text();
    expect(html).toContain('Choose an account');
    const links = [...html.matchAll(/href="([^"]+)"/g)].map(
      (m) => new URL(m[1]!.replaceAll('&amp;', '&'), harness.url),
    );
    const picks = links.filter((l) => l.pathname === '/oauth/authorize');
    expect(picks.map((l) => Number(l.searchParams.get('portalId'))).sort()).toEqual(
      [first.portalId, second.portalId].sort(),
    );

    const pick = picks.find((l) => l.searchParams.get('portalId') === String(second.portalId))!;
    const redirect = await fetch(pick, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe('pick');
    const tokens = await oauth.oauth.tokensApi.create(
      'authorization_code',
      back.searchParams.get('code') ?? '',
      redirectUri,
      second.clientId,
      second.clientSecret,
    );
    expect(await oauth.oauth.accessTokensApi.get(tokens.accessToken)).toMatchObject({
      hubId: second.portalId,
    });

    const cancel = links.find((l) => l.href.startsWith(redirectUri))!;
    expect(cancel.searchParams.get('error')).toBe('access_denied');
    expect(cancel.searchParams.get('state')).toBe('pick');
  });

  it('refreshes: a new 30-minute access token, the same refresh token', async () => {
    const portal = await harness.createPortal();
    const refreshed = await oauth.oauth.tokensApi.create(
      'refresh_token',
      undefined,
      undefined,
      portal.clientId,
      portal.clientSecret,
      portal.refreshToken,
    );
    expect(refreshed.refreshToken).toBe(portal.refreshToken);
    expect(refreshed.accessToken).not.toBe(portal.accessToken);
    expect(refreshed.expiresIn).toBe(1800);
    const wrongSecret = await failure(
      oauth.oauth.tokensApi.create(
        'refresh_token',
        undefined,
        undefined,
        portal.clientId,
        'nope',
        portal.refreshToken,
      ),
    );
    expect(wrongSecret.code).toBe(400);
  });

  it('expires access tokens after 30 minutes with EXPIRED_AUTHENTICATION', async () => {
    const portal = await harness.createPortal();
    await portal.client.crm.contacts.basicApi.getPage();
    harness.advanceClock(31 * 60_000);
    const expired = await failure(portal.client.crm.contacts.basicApi.getPage());
    expect(expired.code).toBe(401);
    expect(expired.body).toMatchObject({ status: 'error', category: 'EXPIRED_AUTHENTICATION' });
    // The log still knows whose token it was.
    expect(harness.ctx.requests.list({ account: String(portal.portalId) }).at(-1)?.status).toBe(401);
    const refreshed = await oauth.oauth.tokensApi.create(
      'refresh_token',
      undefined,
      undefined,
      portal.clientId,
      portal.clientSecret,
      portal.refreshToken,
    );
    await expect(
      harness.client(refreshed.accessToken).crm.contacts.basicApi.getPage(),
    ).resolves.toBeDefined();
  });

  it('answers BAD_REFRESH_TOKEN after a revoke-token fault, and 401 to the old access token', async () => {
    const portal = await harness.createPortal();
    await harness.addFault({ service: 'hubspot', kind: 'revoke-token', account: portal.portalId, count: 1 });
    const revoked = await failure(
      oauth.oauth.tokensApi.create(
        'refresh_token',
        undefined,
        undefined,
        portal.clientId,
        portal.clientSecret,
        portal.refreshToken,
      ),
    );
    expect(revoked.code).toBe(400);
    expect(revoked.body).toMatchObject({
      status: 'BAD_REFRESH_TOKEN',
      message: 'missing or invalid refresh token',
    });
    const denied = await failure(portal.client.crm.contacts.basicApi.getPage());
    expect(denied.code).toBe(401);
    expect(denied.body.category).toBe('INVALID_AUTHENTICATION');
  });

  it('revokes on the next data-plane call too', async () => {
    const portal = await harness.createPortal();
    await harness.addFault({ service: 'hubspot', kind: 'revoke-token', account: portal.portalId, count: 1 });
    expect((await failure(portal.client.crm.contacts.basicApi.getPage())).code).toBe(401);
    const refresh = await failure(
      oauth.oauth.tokensApi.create(
        'refresh_token',
        undefined,
        undefined,
        portal.clientId,
        portal.clientSecret,
        portal.refreshToken,
      ),
    );
    expect(refresh.body.status).toBe('BAD_REFRESH_TOKEN');
  });

  it('names the portal of a private app token at account-info, and not at the OAuth token-info route', async () => {
    const portal = await harness.createPortal();
    const created = await harness.control<{ portalId: number; accessToken: string; scopes: string[] }>(
      'POST',
      `/_emulator/hubspot/portals/${portal.portalId}/private-apps`,
      {},
    );
    expect(created.status).toBe(201);
    const token = created.body.accessToken;
    expect(token).toMatch(/^pat-na1-[0-9a-f-]{36}$/);
    const client = harness.client(token);
    await expect(client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();
    // The SDK has no account-info API: its generic request, as a connector would send it.
    const details = await client.apiRequest({ method: 'GET', path: '/account-info/v3/details' });
    expect(details.status).toBe(200);
    const body = (await details.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ portalId: portal.portalId, accountType: 'STANDARD' });
    expect(ACCOUNT_DETAILS_SCHEMA(body), JSON.stringify(ACCOUNT_DETAILS_SCHEMA.errors)).toBe(true);
    // An OAuth token names its portal there too.
    const viaOAuth = await portal.client.apiRequest({ method: 'GET', path: '/account-info/v3/details' });
    expect(await viaOAuth.json()).toMatchObject({ portalId: portal.portalId });

    const info = await failure(oauth.oauth.accessTokensApi.get(token));
    expect(info.code).toBe(404);
    const unknown = await harness
      .client('pat-na1-00000000-0000-4000-8000-000000000000')
      .apiRequest({ method: 'GET', path: '/account-info/v3/details' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ category: 'INVALID_AUTHENTICATION' });
    // Never expires.
    harness.advanceClock(24 * 3_600_000);
    await expect(client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();
  });

  it('describes a live OAuth access token, and 404s once it expired', async () => {
    const portal = await harness.createPortal({ appId: 7002 });
    const info = await oauth.oauth.accessTokensApi.get(portal.accessToken);
    expect(info).toMatchObject({ hubId: portal.portalId, appId: 7002, tokenType: 'access' });
    harness.advanceClock(31 * 60_000);
    expect((await failure(oauth.oauth.accessTokensApi.get(portal.accessToken))).code).toBe(404);
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    expect(checked.length).toBeGreaterThan(10);
  });
});
