import { randomUUID } from 'node:crypto';
import { oauth2Refresher, type StoredCredentials } from '@syncline/connectors';
import { pullJobIds } from '@syncline/jobs';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../../../test/support/env';
import { freePort } from '../testing/processes';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import {
  MICROSOFT_IDENTITY_SCOPES,
  MICROSOFT_PRODUCT_SCOPES,
  MicrosoftIdTokenVerifier,
} from './oauth-microsoft.client';
import {
  CALLBACK_BASE,
  callbackPath,
  consentAtMicrosoft,
  MicrosoftDirectory,
  type MicrosoftTestUser,
  microsoftAccountOf,
  type OAuthEmulators,
  s256,
  startOAuthEmulators,
  storedState,
} from './oauth-testing';

interface ConnectionBody {
  id: string;
  provider: string;
  externalAccountId: string;
  displayName: string | null;
  status: string;
  hasCredentials: boolean;
}
interface StartBody {
  authorizeUrl: string;
  state: string;
}

const PRODUCTS = ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo'] as const;
const CALLBACK = `${CALLBACK_BASE}/api/v1/connections/oauth/microsoft/callback`;

describe('connecting Microsoft 365 through OAuth (the emulated identity platform)', () => {
  let oauth: OAuthEmulators;
  let microsoft: MicrosoftDirectory;
  let t: TestApp;
  let redis: Redis;
  let a: { workspaceId: string; adminKey: string };
  let ana: MicrosoftTestUser;
  // Every response body (and header) this file sees, every token the connections hold and
  // every PKCE verifier the states held: none may meet.
  const bodies: string[] = [];
  const headers: string[] = [];
  const tokens = new Set<string>();
  const verifiers = new Set<string>();
  /** The verifier a fresh state holds, remembered for the check that no response carries it. */
  const verifierOf = async (state: string): Promise<string> => {
    const stored = await storedState(redis, t, state);
    if (!stored) throw new Error('the started state is not in Redis');
    verifiers.add(stored.codeVerifier);
    return stored.codeVerifier;
  };

  const call = async (
    method: 'GET' | 'POST',
    url: string,
    options: { key?: string; payload?: object } = {},
  ): Promise<LightMyRequestResponse> => {
    const res = await t.app.inject({
      method,
      url,
      ...(options.key ? { headers: bearer(options.key) } : {}),
      ...(options.payload ? { payload: options.payload } : {}),
    });
    bodies.push(res.body);
    headers.push(JSON.stringify(res.headers));
    return res;
  };
  const start = async (products: readonly string[] = PRODUCTS): Promise<StartBody> => {
    const res = await call('POST', '/api/v1/connections/oauth/microsoft/start', {
      key: a.adminKey,
      payload: { products },
    });
    expect(res.statusCode, res.body).toBe(201);
    const started = res.json<StartBody>();
    await verifierOf(started.state);
    return started;
  };
  /** Start, consent as `upn`, callback: the API's answer. */
  const connect = async (upn: string, products: readonly string[] = PRODUCTS) => {
    const started = await start(products);
    return call(
      'GET',
      callbackPath(await consentAtMicrosoft(started.authorizeUrl, { upn, decision: 'accept' })),
    );
  };
  const credentialsOf = async (connectionId: string): Promise<Required<StoredCredentials>> => {
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    const ciphertext = Buffer.from(row.credentialsCiphertext!);
    const opened = JSON.parse(
      t.keyring.open({ keyId: row.credentialsKeyId!, ciphertext }, `connection:${connectionId}`),
    ) as Required<StoredCredentials>;
    expect(ciphertext.includes(Buffer.from(opened.refreshToken))).toBe(false);
    tokens.add(opened.accessToken);
    tokens.add(opened.refreshToken);
    return opened;
  };
  const microsoftConnections = (workspaceId: string) =>
    t.prisma.connection.findMany({
      where: { workspaceId, provider: { in: ['microsoft_calendar', 'microsoft_mail', 'microsoft_todo'] } },
      orderBy: { createdAt: 'asc' },
    });

  beforeAll(async () => {
    oauth = await startOAuthEmulators();
    microsoft = oauth.microsoft;
    t = await startTestApp('oauth_microsoft', oauth.env);
    a = await seedWorkspace(t.prisma, 'Contoso');
    ana = await microsoft.addUser('ana@contoso.example');
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    if (redis) {
      const left = await redis.keys(`${t.config.REDIS_PREFIX}:oauth-state:*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
    }
    await t?.close();
    await oauth?.close();
  });

  let first: ConnectionBody[];

  it('start names the consent page, our client, the redirect URI, the scopes of the products asked for and the PKCE challenge', async () => {
    const started = await start(['microsoft-calendar', 'microsoft-todo']);
    const stored = await storedState(redis, t, started.state);
    expect(stored?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    // Sealed in Redis, never in the clear.
    expect(stored!.raw).not.toContain(stored!.codeVerifier);
    const authorize = new URL(started.authorizeUrl);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${microsoft.url}/common/oauth2/v2.0/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      client_id: microsoft.app.clientId,
      response_type: 'code',
      redirect_uri: CALLBACK,
      response_mode: 'query',
      scope: [...MICROSOFT_IDENTITY_SCOPES, 'Calendars.ReadWrite', 'Tasks.ReadWrite'].join(' '),
      state: started.state,
      code_challenge: s256(stored!.codeVerifier),
      code_challenge_method: 'S256',
      prompt: 'select_account',
    });
  });

  it('one consent creates the calendar, mail and To Do connections, keyed <tid>:<oid>, tokens sealed', async () => {
    const res = await connect(ana.userPrincipalName);
    expect(res.statusCode, res.body).toBe(200);
    first = res.json<{ data: ConnectionBody[] }>().data;
    expect(
      first.map((c) => [c.provider, c.externalAccountId, c.displayName, c.status, c.hasCredentials]),
    ).toEqual(
      // No name of its own: the app names it by product and address, as a Google connection.
      PRODUCTS.map((product) => [product, microsoftAccountOf(ana), null, 'pending', true]),
    );
    for (const c of first) {
      expect(await t.prisma.connection.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
        workspaceId: a.workspaceId,
        credentialsProof: 'oauth_consent',
        credentialsVerifiedAt: expect.any(Date),
        // Whose calendar and tasks these are: meetings and tasks are copied in only when theirs.
        accountAddress: ana.userPrincipalName.toLowerCase(),
      });
      expect(await t.pullQueue.getJob(pullJobIds(c.id).primary)).toBeDefined();
    }
    // One grant behind all three, each sealed to its own row.
    const sealed = await Promise.all(first.map((c) => credentialsOf(c.id)));
    expect(new Set(sealed.map((c) => c.refreshToken)).size).toBe(1);
    const [credentials] = sealed;
    expect(Date.parse(credentials!.expiresAt) - Date.now()).toBeGreaterThan(1_800_000);
    // The access token opens Graph as that user; the refresh token refreshes as the workers refresh it.
    const me = await fetch(`${microsoft.url}/v1.0/me`, {
      headers: { authorization: `Bearer ${credentials!.accessToken}` },
    });
    expect(await me.json()).toMatchObject({ id: ana.id, userPrincipalName: ana.userPrincipalName });
    const refreshed = await oauth2Refresher({
      tokenUrl: `${microsoft.url}/common/oauth2/v2.0/token`,
      ...microsoft.app,
    })(credentials!.refreshToken);
    expect(refreshed.ok).toBe(true);
  });

  it('connecting the same account again (after its sign-in name changed) gives the same connections new tokens', async () => {
    const before = await credentialsOf(first[0]!.id);
    await microsoft.control('PATCH', `/_emulator/microsoft/users/${ana.userPrincipalName}`, {
      userPrincipalName: 'ana.lopez@contoso.example',
    });
    const res = await connect('ana.lopez@contoso.example');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ data: ConnectionBody[] }>().data.map((c) => c.id)).toEqual(first.map((c) => c.id));
    const after = await credentialsOf(first[0]!.id);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(await microsoftConnections(a.workspaceId)).toHaveLength(3);
    const audit = await t.prisma.auditLog.findMany({
      where: { workspaceId: a.workspaceId, action: 'connection.oauth_connected', targetId: first[0]!.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((entry) => (entry.details as { reconnected: boolean }).reconnected)).toEqual([
      false,
      true,
    ]);
  });

  it('a user of another tenant, even under the same sign-in name, is another account', async () => {
    const namesake = await microsoft.addUser(ana.userPrincipalName);
    expect(namesake.tenantId).not.toBe(ana.tenantId);
    const res = await connect(namesake.userPrincipalName, ['microsoft-mail']);
    expect(res.statusCode, res.body).toBe(200);
    const [created] = res.json<{ data: ConnectionBody[] }>().data;
    expect(created).toMatchObject({
      provider: 'microsoft-mail',
      externalAccountId: microsoftAccountOf(namesake),
    });
    expect(first.map((c) => c.id)).not.toContain(created!.id);
    expect(await microsoftConnections(a.workspaceId)).toHaveLength(4);
  });

  it('a cancelled consent is 403 oauth_consent_denied and creates nothing', async () => {
    const bea = await microsoft.addUser('bea@fabrikam.example');
    const started = await start();
    const redirect = await consentAtMicrosoft(started.authorizeUrl, {
      upn: bea.userPrincipalName,
      decision: 'cancel',
    });
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode).toBe(403);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('oauth_consent_denied');
    expect(await t.prisma.connection.count({ where: { externalAccountId: microsoftAccountOf(bea) } })).toBe(
      0,
    );
  });

  it("a consent that leaves out a product's access is refused, and creates nothing", async () => {
    const cid = await microsoft.addUser('cid@fabrikam.example');
    const started = await start();
    // An administrator's policy (or the user) grants less than asked: no To Do access.
    const url = new URL(started.authorizeUrl);
    const kept = url.searchParams
      .get('scope')!
      .split(' ')
      .filter((scope) => scope !== MICROSOFT_PRODUCT_SCOPES['microsoft-todo']);
    url.searchParams.set('scope', kept.join(' '));
    const redirect = await consentAtMicrosoft(url.toString(), {
      upn: cid.userPrincipalName,
      decision: 'accept',
    });
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      error: { code: 'oauth_consent_denied', message: expect.stringContaining('microsoft-todo') },
    });
    expect(await t.prisma.connection.count({ where: { externalAccountId: microsoftAccountOf(cid) } })).toBe(
      0,
    );
  });

  it('a consent without offline_access (no refresh token) is refused', async () => {
    const dan = await microsoft.addUser('dan@fabrikam.example');
    const started = await start(['microsoft-calendar']);
    const url = new URL(started.authorizeUrl);
    url.searchParams.set('scope', url.searchParams.get('scope')!.replace('offline_access ', ''));
    const res = await call(
      'GET',
      callbackPath(
        await consentAtMicrosoft(url.toString(), { upn: dan.userPrincipalName, decision: 'accept' }),
      ),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'oauth_failed', message: expect.stringContaining('refresh') },
    });
    expect(await t.prisma.connection.count({ where: { externalAccountId: microsoftAccountOf(dan) } })).toBe(
      0,
    );
  });

  it("the identity platform's refusals of the code are 400 oauth_failed, naming the AADSTS code", async () => {
    const eve = await microsoft.addUser('eve@fabrikam.example');
    const made = await call(
      'GET',
      `/api/v1/connections/oauth/microsoft/callback?${new URLSearchParams({ code: 'made-up', state: (await start()).state })}`,
    );
    expect(made.statusCode).toBe(400);
    expect(made.json<{ error: { code: string; message: string } }>().error).toEqual({
      code: 'oauth_failed',
      message: expect.stringContaining('AADSTS9002313'),
    });
    // A code redeemed once already (a replayed redirect, under a fresh state).
    const redirect = await consentAtMicrosoft((await start()).authorizeUrl, {
      upn: eve.userPrincipalName,
      decision: 'accept',
    });
    expect((await call('GET', callbackPath(redirect))).statusCode).toBe(200);
    const code = redirect.searchParams.get('code')!;
    const again = await call(
      'GET',
      `/api/v1/connections/oauth/microsoft/callback?${new URLSearchParams({ code, state: (await start()).state })}`,
    );
    expect(again.statusCode).toBe(400);
    expect(again.json<{ error: { message: string } }>().error.message).toContain(
      'AADSTS54005: the authorization code was already redeemed',
    );
  });

  it('a code is bound to the verifier its state holds (PKCE): without it, or with another, it is AADSTS501481', async () => {
    const gil = await microsoft.addUser('gil@fabrikam.example');
    const started = await start(['microsoft-mail']);
    const redirect = await consentAtMicrosoft(started.authorizeUrl, {
      upn: gil.userPrincipalName,
      decision: 'accept',
    });
    const code = redirect.searchParams.get('code')!;
    // Whoever took the code off the redirect, even holding our client secret, redeems nothing.
    for (const verifier of [undefined, 'x'.repeat(43)]) {
      const res = await fetch(`${microsoft.url}/common/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          client_id: microsoft.app.clientId,
          client_secret: microsoft.app.clientSecret,
          ...(verifier === undefined ? {} : { code_verifier: verifier }),
        }),
      });
      expect(res.status, String(verifier)).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_grant', error_codes: [501481] });
    }
    // The callback presents the verifier the state holds: the code redeems, and the state is gone.
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ data: ConnectionBody[] }>().data).toMatchObject([
      { provider: 'microsoft-mail', externalAccountId: microsoftAccountOf(gil) },
    ]);
    expect(await storedState(redis, t, started.state)).toBeNull();

    // A code of another connect injected into this one's callback is redeemed with this
    // state's verifier: refused, and nothing is connected.
    const hal = await microsoft.addUser('hal@fabrikam.example');
    const victim = await start(['microsoft-mail']);
    const injected = await consentAtMicrosoft((await start(['microsoft-mail'])).authorizeUrl, {
      upn: hal.userPrincipalName,
      decision: 'accept',
    });
    injected.searchParams.set('state', victim.state);
    const refused = await call('GET', callbackPath(injected));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error: { code: 'oauth_failed', message: expect.stringContaining('AADSTS501481') },
    });
    expect(await t.prisma.connection.count({ where: { externalAccountId: microsoftAccountOf(hal) } })).toBe(
      0,
    );
  });

  it('start validates the products', async () => {
    for (const payload of [
      undefined,
      { products: [] },
      { products: ['gmail'] },
      { products: ['microsoft-mail', 'microsoft-mail'] },
    ]) {
      const res = await call('POST', '/api/v1/connections/oauth/microsoft/start', {
        key: a.adminKey,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json<{ error: { code: string; message: string } }>().error).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('products'),
      });
    }
  });

  describe('the id token', () => {
    let other: MicrosoftDirectory;
    let foreignToken: string;
    let ownToken: string;
    let fay: MicrosoftTestUser;

    /** An id token from the token endpoint for `directory`'s app, after fay's consent. */
    const idTokenFor = async (directory: MicrosoftDirectory, redirectUri: string): Promise<string> => {
      const authorize = new URL(`${directory.url}/common/oauth2/v2.0/authorize`);
      for (const [name, value] of Object.entries({
        client_id: directory.app.clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: MICROSOFT_IDENTITY_SCOPES.join(' '),
        prompt: 'select_account',
      }))
        authorize.searchParams.set(name, value);
      const redirect = await consentAtMicrosoft(authorize.toString(), {
        upn: fay.userPrincipalName,
        decision: 'accept',
      });
      const res = await fetch(`${directory.url}/common/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: redirect.searchParams.get('code')!,
          redirect_uri: redirectUri,
          client_id: directory.app.clientId,
          client_secret: directory.app.clientSecret,
        }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id_token: string }).id_token;
    };
    const verifier = (settings: Partial<{ loginUrl: string; tenant: string; clientId: string }> = {}) =>
      new MicrosoftIdTokenVerifier({
        loginUrl: microsoft.url,
        tenant: 'common',
        clientId: microsoft.app.clientId,
        ...settings,
      });

    beforeAll(async () => {
      fay = await microsoft.addUser('fay@northwind.example');
      const otherRedirect = 'https://elsewhere.example/callback';
      other = await MicrosoftDirectory.register(microsoft.url, [otherRedirect]);
      foreignToken = await idTokenFor(other, otherRedirect);
      ownToken = await idTokenFor(microsoft, CALLBACK);
    });

    it("names the user's tenant and object id when it is ours", async () => {
      expect(await verifier().verify(ownToken)).toEqual({
        ok: true,
        value: {
          tenantId: fay.tenantId,
          objectId: fay.id,
          username: fay.userPrincipalName,
          address: fay.userPrincipalName.toLowerCase(),
        },
      });
      // Restricted to fay's tenant, by its id: still good.
      expect((await verifier({ tenant: fay.tenantId }).verify(ownToken)).ok).toBe(true);
    });

    it('is refused when issued for another app (audience)', async () => {
      const verified = await verifier().verify(foreignToken);
      expect(verified).toEqual({
        ok: false,
        error: { code: 'refused', message: expect.stringContaining('aud') },
      });
      // The same token is good for the app it was issued to: only the audience differs.
      expect((await verifier({ clientId: other.app.clientId }).verify(foreignToken)).ok).toBe(true);
    });

    it('is refused when tampered with, from another issuer, or from a tenant MICROSOFT_TENANT leaves out', async () => {
      const [header, payload, signature] = ownToken.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, oid: randomUUID() })).toString('base64url');
      expect(await verifier().verify(`${header}.${forged}.${signature}`)).toMatchObject({
        ok: false,
        error: { code: 'refused' },
      });
      // The same keys, but the issuer we expect is of another origin.
      const elsewhere = microsoft.url.replace('localhost', '127.0.0.1');
      expect(await verifier({ loginUrl: elsewhere }).verify(ownToken)).toEqual({
        ok: false,
        error: { code: 'refused', message: expect.stringContaining('issued') },
      });
      expect(await verifier({ tenant: randomUUID() }).verify(ownToken)).toEqual({
        ok: false,
        error: { code: 'refused', message: expect.stringContaining('MICROSOFT_TENANT') },
      });
      expect(await verifier({ tenant: 'consumers' }).verify(ownToken)).toMatchObject({ ok: false });
    });

    it("is 'unavailable' (worth retrying) when the signing keys cannot be fetched", async () => {
      const closed = `http://127.0.0.1:${await freePort()}`;
      expect(await verifier({ loginUrl: closed }).verify(ownToken)).toMatchObject({
        ok: false,
        error: { code: 'unavailable' },
      });
    });
  });

  it('without MICROSOFT_CLIENT_ID and _SECRET, start is 503 naming them; an unreachable token endpoint is 503', async () => {
    const unset = await startTestApp('oauth_microsoft_unset', {
      ...oauth.env,
      MICROSOFT_CLIENT_ID: '',
      MICROSOFT_CLIENT_SECRET: '',
    });
    const down = await startTestApp('oauth_microsoft_down', {
      ...oauth.env,
      MICROSOFT_LOGIN_URL: `http://127.0.0.1:${await freePort()}`,
    });
    try {
      const admin = await seedWorkspace(unset.prisma, 'Unset');
      const res = await unset.app.inject({
        method: 'POST',
        url: '/api/v1/connections/oauth/microsoft/start',
        headers: bearer(admin.adminKey),
        payload: { products: ['microsoft-mail'] },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json<{ error: { message: string } }>().error.message).toBe(
        'microsoft OAuth is not configured: set MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET',
      );

      const other = await seedWorkspace(down.prisma, 'Down');
      const started = await down.app.inject({
        method: 'POST',
        url: '/api/v1/connections/oauth/microsoft/start',
        headers: bearer(other.adminKey),
        payload: { products: ['microsoft-mail'] },
      });
      expect(started.statusCode).toBe(201);
      const callback = await down.app.inject({
        method: 'GET',
        url: `/api/v1/connections/oauth/microsoft/callback?${new URLSearchParams({ code: 'any', state: started.json<StartBody>().state })}`,
      });
      expect(callback.statusCode).toBe(503);
      expect(await down.prisma.connection.count({ where: { workspaceId: other.workspaceId } })).toBe(0);
    } finally {
      await unset.close();
      await down.close();
    }
  });

  it('no response body or header and no log line holds a token or a PKCE verifier', () => {
    expect(tokens.size).toBeGreaterThanOrEqual(4);
    expect(verifiers.size).toBeGreaterThanOrEqual(10);
    const everything = [...bodies, ...headers, ...t.logs].join('\n');
    for (const secret of [...tokens, ...verifiers]) expect(everything).not.toContain(secret);
    expect(bodies.join('\n')).not.toMatch(/accessToken|refreshToken|ciphertext|id_token/i);
  });
});
