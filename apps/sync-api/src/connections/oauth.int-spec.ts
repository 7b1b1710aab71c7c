import { Client } from '@hubspot/api-client';
import { oauth2Refresher, type StoredCredentials } from '@syncline/connectors';
import { pullJobIds } from '@syncline/jobs';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../../../test/support/env';
import { signInAs } from '../testing/sign-in';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { GOOGLE_PRODUCT_SCOPES } from './oauth-google.client';
import { oauthStateKey } from './oauth-state.repository';
import {
  approveConsent,
  CALLBACK_BASE,
  callbackPath,
  createPortal,
  HUBSPOT_APP,
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
  expiresAt: string;
}

const PORTAL_A = 61_001;
const PORTAL_B = 61_002;
const GOOGLE_PRODUCTS = ['google-calendar', 'gmail', 'google-tasks'] as const;

describe('connecting through OAuth (emulated HubSpot and Google)', () => {
  let oauth: OAuthEmulators;
  let t: TestApp;
  let redis: Redis;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  // Every response body (and header) this file sees, every token the connections hold and
  // every PKCE verifier the states held: none may meet.
  const bodies: string[] = [];
  const headers: string[] = [];
  const tokens = new Set<string>();
  const verifiers = new Set<string>();
  const seen = (res: LightMyRequestResponse): void => {
    bodies.push(res.body);
    headers.push(JSON.stringify(res.headers));
  };
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
    seen(res);
    return res;
  };
  const start = async (key: string, provider: string, payload?: object): Promise<StartBody> => {
    const res = await call('POST', `/api/v1/connections/oauth/${provider}/start`, {
      key,
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode).toBe(201);
    const started = res.json<StartBody>();
    await verifierOf(started.state);
    return started;
  };
  /** Opens a connection's sealed credentials, as the workers do. */
  const credentialsOf = async (connectionId: string): Promise<Required<StoredCredentials>> => {
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    const ciphertext = Buffer.from(row.credentialsCiphertext!);
    const opened = JSON.parse(
      t.keyring.open({ keyId: row.credentialsKeyId!, ciphertext }, `connection:${connectionId}`),
    ) as Required<StoredCredentials>;
    expect(ciphertext.includes(Buffer.from(opened.accessToken))).toBe(false);
    tokens.add(opened.accessToken);
    tokens.add(opened.refreshToken);
    return opened;
  };
  /** The state's key as the app's Redis client (with the app's key prefix) writes it. */
  const stateKey = (state: string): string => `${t.config.REDIS_PREFIX}:${oauthStateKey(state)}`;
  const connectHubspot = async (key: string, portalId: number): Promise<ConnectionBody[]> => {
    const started = await start(key, 'hubspot');
    const redirect = await approveConsent(started.authorizeUrl, { portalId });
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode).toBe(200);
    return res.json<{ data: ConnectionBody[] }>().data;
  };

  beforeAll(async () => {
    oauth = await startOAuthEmulators();
    await createPortal(oauth.emulators, PORTAL_A);
    await createPortal(oauth.emulators, PORTAL_B);
    t = await startTestApp('oauth', oauth.env);
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
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

  let hubspotConnection: ConnectionBody;

  it('HubSpot: start, consent in the portal, callback: a connection with sealed tokens the emulator honours', async () => {
    const started = await start(a.adminKey, 'hubspot');
    // A state of 256 random bits, kept in Redis for 10 minutes under its hash only.
    expect(started.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttl = await redis.ttl(stateKey(started.state));
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
    expect(await redis.keys(`${t.config.REDIS_PREFIX}:*${started.state}*`)).toEqual([]);
    const expiresIn = Date.parse(started.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(590_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);

    const authorize = new URL(started.authorizeUrl);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${oauth.emulators.hubspotUrl}/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: HUBSPOT_APP.clientId,
      redirect_uri: `${CALLBACK_BASE}/api/v1/connections/oauth/hubspot/callback`,
      state: started.state,
    });
    expect(authorize.searchParams.get('scope')?.split(' ')).toContain('crm.objects.contacts.write');

    const redirect = await approveConsent(started.authorizeUrl, { portalId: PORTAL_A });
    expect(`${redirect.origin}${redirect.pathname}`).toBe(authorize.searchParams.get('redirect_uri'));
    expect(redirect.searchParams.get('state')).toBe(started.state);
    // No API key: the state alone authorises the callback.
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode).toBe(200);
    const { data } = res.json<{ data: ConnectionBody[] }>();
    expect(data).toHaveLength(1);
    hubspotConnection = data[0]!;
    expect(hubspotConnection).toMatchObject({
      provider: 'hubspot',
      externalAccountId: String(PORTAL_A),
      displayName: `portal-${PORTAL_A}.example.test`,
      status: 'pending',
      hasCredentials: true,
    });
    expect(await redis.exists(stateKey(started.state))).toBe(0);

    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: hubspotConnection.id } });
    expect(row.workspaceId).toBe(a.workspaceId);
    // HubSpot named the portal itself (the token's info): the account is proven.
    expect(row).toMatchObject({ credentialsProof: 'oauth_consent', credentialsVerifiedAt: expect.any(Date) });
    const credentials = await credentialsOf(hubspotConnection.id);
    expect(Date.parse(credentials.expiresAt) - Date.now()).toBeGreaterThan(1_700_000);
    // The sealed access token reads the portal through the SDK; the refresh token refreshes
    // through the workers' own refresher.
    const sdk = new Client({ accessToken: credentials.accessToken, basePath: oauth.emulators.hubspotUrl });
    const info = await sdk.oauth.accessTokensApi.get(credentials.accessToken);
    expect(info.hubId).toBe(PORTAL_A);
    await expect(sdk.crm.contacts.basicApi.getPage()).resolves.toHaveProperty('results');
    const refreshed = await oauth2Refresher({
      tokenUrl: `${oauth.emulators.hubspotUrl}/oauth/v1/token`,
      clientId: HUBSPOT_APP.clientId,
      clientSecret: HUBSPOT_APP.clientSecret,
    })(credentials.refreshToken);
    expect(refreshed.ok).toBe(true);

    // The first pull (the backfill) is queued, as for POST /api/v1/connections.
    expect(await t.pullQueue.getJob(pullJobIds(hubspotConnection.id).primary)).toBeDefined();
  });

  it('GET /api/v1/connections lists it; the audit log says who connected it, without tokens', async () => {
    const list = await call('GET', '/api/v1/connections', { key: a.adminKey });
    expect(list.json<{ data: ConnectionBody[] }>().data.map((c) => c.id)).toEqual([hubspotConnection.id]);

    const audit = await call('GET', '/api/v1/audit-log', { key: a.adminKey });
    const entries = audit.json<{ data: { action: string; targetId: string; actor: { keyId: string } }[] }>();
    const adminKeyId = (await t.prisma.apiKey.findFirstOrThrow({ where: { workspaceId: a.workspaceId } })).id;
    expect(entries.data).toContainEqual(
      expect.objectContaining({
        action: 'connection.oauth_connected',
        targetId: hubspotConnection.id,
        actor: expect.objectContaining({ keyId: adminKeyId }),
        details: {
          provider: 'hubspot',
          externalAccountId: String(PORTAL_A),
          reconnected: false,
          dryRun: false,
        },
      }),
    );
  });

  it('HubSpot again for the same portal: the same connection gets the new tokens (no 409), proven', async () => {
    const before = await credentialsOf(hubspotConnection.id);
    // As a connection made before accounts were proven: consenting again proves it.
    await t.prisma.connection.update({
      where: { id: hubspotConnection.id },
      data: { credentialsVerifiedAt: null, credentialsProof: null },
    });
    const data = await connectHubspot(a.adminKey, PORTAL_A);
    expect(data.map((c) => c.id)).toEqual([hubspotConnection.id]);
    const after = await credentialsOf(hubspotConnection.id);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(
      await t.prisma.connection.count({ where: { workspaceId: a.workspaceId, provider: 'hubspot' } }),
    ).toBe(1);
    expect(
      await t.prisma.connection.findUniqueOrThrow({ where: { id: hubspotConnection.id } }),
    ).toMatchObject({
      credentialsProof: 'oauth_consent',
      credentialsVerifiedAt: expect.any(Date),
    });
    const audit = await t.prisma.auditLog.findMany({
      where: { workspaceId: a.workspaceId, action: 'connection.oauth_connected' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((entry) => entry.details)).toEqual([
      { provider: 'hubspot', externalAccountId: String(PORTAL_A), reconnected: false, dryRun: false },
      { provider: 'hubspot', externalAccountId: String(PORTAL_A), reconnected: true, dryRun: false },
    ]);
  });

  const email = 'rep@acme.example';

  it('Google: one consent creates calendar, gmail and tasks connections for the account', async () => {
    const started = await start(a.adminKey, 'google', { products: [...GOOGLE_PRODUCTS] });
    const authorize = new URL(started.authorizeUrl);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${oauth.emulators.googleUrl}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: oauth.google.clientId,
      redirect_uri: `${CALLBACK_BASE}/api/v1/connections/oauth/google/callback`,
      response_type: 'code',
      access_type: 'offline',
      state: started.state,
      code_challenge_method: 'S256',
    });
    expect(authorize.searchParams.get('scope')?.split(' ').sort()).toEqual(
      ['email', 'openid', ...Object.values(GOOGLE_PRODUCT_SCOPES)].sort(),
    );
    // PKCE: the challenge is that of the verifier the state holds, sealed (never in the clear).
    const stored = await storedState(redis, t, started.state);
    expect(stored?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(authorize.searchParams.get('code_challenge')).toBe(s256(stored!.codeVerifier));
    expect(stored!.raw).not.toContain(stored!.codeVerifier);
    expect(started.authorizeUrl).not.toContain(stored!.codeVerifier);

    const redirect = await approveConsent(started.authorizeUrl, { email });
    // The exchange presents the verifier (the emulator refuses the code without it), and the
    // verifier goes with the state: single use.
    const res = await call('GET', callbackPath(redirect));
    expect(res.statusCode).toBe(200);
    expect(await storedState(redis, t, started.state)).toBeNull();
    const { data } = res.json<{ data: ConnectionBody[] }>();
    expect(data.map((c) => [c.provider, c.externalAccountId, c.status])).toEqual(
      GOOGLE_PRODUCTS.map((product) => [product, email, 'pending']),
    );

    // One grant behind all three, each sealed to its own row, each proven by Google's id token.
    for (const c of data)
      expect(await t.prisma.connection.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({
        credentialsProof: 'oauth_consent',
        credentialsVerifiedAt: expect.any(Date),
      });
    const sealed = await Promise.all(data.map((c) => credentialsOf(c.id)));
    expect(new Set(sealed.map((c) => c.refreshToken)).size).toBe(1);
    const [credentials] = sealed;
    const userinfo = await fetch(`${oauth.emulators.googleUrl}/oauth2/v3/userinfo`, {
      headers: { authorization: `Bearer ${credentials!.accessToken}` },
    });
    expect(await userinfo.json()).toMatchObject({ email });
    const refreshed = await oauth2Refresher({
      tokenUrl: `${oauth.emulators.googleUrl}/token`,
      ...oauth.google,
    })(credentials!.refreshToken);
    expect(refreshed.ok).toBe(true);

    const list = await call('GET', '/api/v1/connections', { key: a.adminKey });
    expect(list.json<{ data: ConnectionBody[] }>().data.map((c) => c.provider)).toEqual([
      'hubspot',
      ...GOOGLE_PRODUCTS,
    ]);
  });

  it('Google: asking for one product creates only that connection, and asks only its access', async () => {
    const started = await start(b.adminKey, 'google', { products: ['google-tasks'] });
    const scopes = new URL(started.authorizeUrl).searchParams.get('scope')?.split(' ');
    expect(scopes).toContain(GOOGLE_PRODUCT_SCOPES['google-tasks']);
    expect(scopes).not.toContain(GOOGLE_PRODUCT_SCOPES.gmail);
    const res = await call('GET', callbackPath(await approveConsent(started.authorizeUrl, { email })));
    expect(res.statusCode).toBe(200);
    expect(res.json<{ data: ConnectionBody[] }>().data.map((c) => c.provider)).toEqual(['google-tasks']);
  });

  it("Google: a consent that leaves out a product's access is refused, and creates nothing", async () => {
    const started = await start(b.adminKey, 'google', { products: ['gmail', 'google-calendar'] });
    // The user unticks Calendar on Google's granular consent screen.
    const url = new URL(started.authorizeUrl);
    const kept = url.searchParams
      .get('scope')!
      .split(' ')
      .filter((s) => s !== GOOGLE_PRODUCT_SCOPES['google-calendar']);
    url.searchParams.set('scope', kept.join(' '));
    const res = await call(
      'GET',
      callbackPath(await approveConsent(url.toString(), { email: 'x@globex.example' })),
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      error: { code: 'oauth_consent_denied', message: expect.stringContaining('google-calendar') },
    });
    const providers = await t.prisma.connection.findMany({
      where: { workspaceId: b.workspaceId, externalAccountId: 'x@globex.example' },
    });
    expect(providers).toEqual([]);
  });

  it('Google: a code taken off the redirect is useless without the verifier the state holds (PKCE)', async () => {
    const redeemAtGoogle = (code: string, codeVerifier?: string) =>
      fetch(`${oauth.emulators.googleUrl}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: `${CALLBACK_BASE}/api/v1/connections/oauth/google/callback`,
          // The worst case: whoever took the code holds our client secret too.
          client_id: oauth.google.clientId,
          client_secret: oauth.google.clientSecret,
          ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
        }),
      });
    for (const verifier of [undefined, 'x'.repeat(43)]) {
      const started = await start(a.adminKey, 'google', { products: ['gmail'] });
      const redirect = await approveConsent(started.authorizeUrl, { email: 'pkce@acme.example' });
      const res = await redeemAtGoogle(redirect.searchParams.get('code')!, verifier);
      expect(res.status, String(verifier)).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
    }

    // A code of another connect injected into this one's callback is redeemed with this
    // state's verifier: refused, and nothing is connected.
    const victim = await start(a.adminKey, 'google', { products: ['gmail'] });
    const other = await start(b.adminKey, 'google', { products: ['gmail'] });
    const injected = await approveConsent(other.authorizeUrl, { email: 'mallory@globex.example' });
    injected.searchParams.set('state', victim.state);
    const res = await call('GET', callbackPath(injected));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'oauth_failed', message: expect.stringContaining('invalid_grant') },
    });
    expect(await t.prisma.connection.count({ where: { externalAccountId: 'mallory@globex.example' } })).toBe(
      0,
    );
  });

  it("workspace isolation: A's state creates in A, whoever's key the callback comes with", async () => {
    const started = await start(a.adminKey, 'hubspot');
    const redirect = await approveConsent(started.authorizeUrl, { portalId: PORTAL_B });
    // B's admin key on the callback changes nothing: the state names the workspace.
    const res = await call('GET', callbackPath(redirect), { key: b.adminKey });
    expect(res.statusCode).toBe(200);
    const [created] = res.json<{ data: ConnectionBody[] }>().data;
    const row = await t.prisma.connection.findUniqueOrThrow({ where: { id: created!.id } });
    expect(row.workspaceId).toBe(a.workspaceId);

    const fromB = await call('GET', `/api/v1/connections/${created!.id}`, { key: b.adminKey });
    expect(fromB.statusCode).toBe(404);
    const listB = await call('GET', '/api/v1/connections', { key: b.adminKey });
    expect(listB.json<{ data: ConnectionBody[] }>().data.map((c) => c.provider)).toEqual(['google-tasks']);

    // The same portal connected from B is B's own connection, not A's reconnected.
    const inB = await connectHubspot(b.adminKey, PORTAL_B);
    expect(inB[0]!.id).not.toBe(created!.id);
    expect((await t.prisma.connection.findUniqueOrThrow({ where: { id: inB[0]!.id } })).workspaceId).toBe(
      b.workspaceId,
    );
  });

  it('started from a browser session, the callback must come with that same session', async () => {
    const admin = await signInAs(t.app, {
      workspaceId: a.workspaceId,
      email: 'olga@acme.test',
      role: 'admin',
    });
    const other = await signInAs(t.app, {
      workspaceId: a.workspaceId,
      email: 'olga@acme.test',
      role: 'admin',
    });
    const startInBrowser = async (): Promise<URL> => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/connections/oauth/hubspot/start',
        headers: admin.writeHeaders,
      });
      seen(res);
      expect(res.statusCode, res.body).toBe(201);
      await verifierOf(res.json<StartBody>().state);
      return approveConsent(res.json<StartBody>().authorizeUrl, { portalId: PORTAL_A });
    };
    const callback = async (redirect: URL, cookie?: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: callbackPath(redirect),
        ...(cookie === undefined ? {} : { headers: { cookie } }),
      });
      seen(res);
      return res;
    };

    for (const cookie of [undefined, other.cookie]) {
      const refused = await callback(await startInBrowser(), cookie);
      expect(refused.statusCode).toBe(400);
      expect(refused.json<{ error: { code: string } }>().error.code).toBe('oauth_state_invalid');
    }
    // A key's state stays unbound: the key's start and a callback without any cookie.
    await connectHubspot(a.adminKey, PORTAL_A);

    const connected = await callback(await startInBrowser(), admin.cookie);
    expect(connected.statusCode, connected.body).toBe(200);
    const audit = await call('GET', `/api/v1/audit-log?actorKind=member&actorId=${admin.memberId}`, {
      key: a.adminKey,
    });
    expect(audit.json<{ data: { action: string; actor: { kind: string } }[] }>().data[0]).toMatchObject({
      action: 'connection.oauth_connected',
      actor: { kind: 'member', id: admin.memberId, label: 'olga@acme.test' },
    });
  });

  describe('from the web app: returnTo and dryRun', () => {
    let admin: Awaited<ReturnType<typeof signInAs>>;
    const PORTAL_C = 61_003;
    /** Starts a connect in the admin's browser session; answers the redirect the consent page makes. */
    const startInBrowser = async (
      provider: 'hubspot' | 'google',
      payload: object,
      choice: { portalId: number } | { email: string },
    ): Promise<URL> => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/connections/oauth/${provider}/start`,
        headers: admin.writeHeaders,
        payload,
      });
      seen(res);
      expect(res.statusCode, res.body).toBe(201);
      await verifierOf(res.json<StartBody>().state);
      return approveConsent(res.json<StartBody>().authorizeUrl, choice);
    };
    /** The browser's request to the callback: with the admin's cookie, or (null) none. */
    const callbackIn = async (url: string, cookie: string | null = admin.cookie) => {
      const res = await t.app.inject({
        method: 'GET',
        url,
        ...(cookie === null ? {} : { headers: { cookie } }),
      });
      seen(res);
      return res;
    };
    /** The path and query the 303 sends the browser to. */
    const redirectedTo = (res: LightMyRequestResponse): URL => {
      expect(res.statusCode, res.body).toBe(303);
      const location = String(res.headers.location);
      // A path of this app only: never another origin.
      expect(location).toMatch(/^\/[^/\\]/);
      return new URL(location, 'https://app.invalid');
    };

    beforeAll(async () => {
      await createPortal(oauth.emulators, PORTAL_C);
      admin = await signInAs(t.app, { workspaceId: a.workspaceId, email: 'olga@acme.test', role: 'admin' });
    });

    it('a dry-run connect ends on returnTo with connected=<ids>, its query kept; the connections are in dry run', async () => {
      const redirect = await startInBrowser(
        'google',
        {
          products: ['google-calendar', 'google-tasks'],
          returnTo: '/admin/connections?view=all',
          dryRun: true,
        },
        { email: 'dry@acme.example' },
      );
      const back = redirectedTo(await callbackIn(callbackPath(redirect)));
      expect(back.pathname).toBe('/admin/connections');
      expect(back.searchParams.get('view')).toBe('all');
      const ids = back.searchParams.get('connected')!.split(',');
      expect(ids).toHaveLength(2);
      const rows = await t.prisma.connection.findMany({ where: { id: { in: ids } } });
      expect(rows.map((r) => [r.workspaceId, r.provider, r.externalAccountId, r.dryRun]).sort()).toEqual([
        [a.workspaceId, 'google_calendar', 'dry@acme.example', true],
        [a.workspaceId, 'google_tasks', 'dry@acme.example', true],
      ]);
      const audit = await t.prisma.auditLog.findFirstOrThrow({
        where: { workspaceId: a.workspaceId, action: 'connection.oauth_connected', targetId: ids[0] },
      });
      expect(audit.details).toMatchObject({ dryRun: true, reconnected: false });

      // Without dryRun, a connect syncs at once.
      const live = redirectedTo(
        await callbackIn(
          callbackPath(
            await startInBrowser('hubspot', { returnTo: '/admin/connections' }, { portalId: PORTAL_C }),
          ),
        ),
      );
      const [id] = live.searchParams.get('connected')!.split(',');
      expect(await t.prisma.connection.findUniqueOrThrow({ where: { id: id! } })).toMatchObject({
        externalAccountId: String(PORTAL_C),
        dryRun: false,
      });
    });

    it('every refusal once the state is read ends on returnTo with oauthError=<code>, and connects nothing', async () => {
      const before = await t.prisma.connection.count({ where: { workspaceId: a.workspaceId } });
      const start = async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/connections/oauth/hubspot/start',
          headers: admin.writeHeaders,
          payload: { returnTo: '/admin/connections?connected=old' },
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json<StartBody>();
      };
      const errorOf = (res: LightMyRequestResponse) => {
        const back = redirectedTo(res);
        expect(back.pathname).toBe('/admin/connections');
        // An earlier outcome in returnTo is replaced, not repeated.
        expect(back.searchParams.has('connected')).toBe(false);
        return back.searchParams.get('oauthError');
      };

      // Consent denied at the provider.
      const denied = await start();
      expect(
        errorOf(
          await callbackIn(
            `/api/v1/connections/oauth/hubspot/callback?${new URLSearchParams({
              error: 'access_denied',
              state: denied.state,
            })}`,
          ),
        ),
      ).toBe('oauth_consent_denied');
      // The provider ended with another error.
      const failed = await start();
      expect(
        errorOf(
          await callbackIn(
            `/api/v1/connections/oauth/hubspot/callback?${new URLSearchParams({
              error: 'server_error',
              state: failed.state,
            })}`,
          ),
        ),
      ).toBe('oauth_failed');
      // The provider refuses the code.
      const refused = await start();
      expect(
        errorOf(
          await callbackIn(
            `/api/v1/connections/oauth/hubspot/callback?${new URLSearchParams({
              code: 'made-up-code',
              state: refused.state,
            })}`,
          ),
        ),
      ).toBe('oauth_failed');
      // The callback in another browser session (no cookie).
      const lured = await approveConsent((await start()).authorizeUrl, { portalId: PORTAL_A });
      expect(errorOf(await callbackIn(callbackPath(lured), null))).toBe('oauth_state_invalid');
      // A HubSpot state at Google's callback.
      const crossed = await start();
      expect(
        errorOf(
          await callbackIn(
            `/api/v1/connections/oauth/google/callback?${new URLSearchParams({ code: 'x', state: crossed.state })}`,
          ),
        ),
      ).toBe('oauth_state_invalid');
      // The member stopped being an admin between the start and the consent.
      const demoted = await approveConsent((await start()).authorizeUrl, { portalId: PORTAL_A });
      await t.prisma.member.update({ where: { id: admin.memberId }, data: { role: 'sales' } });
      try {
        expect(errorOf(await callbackIn(callbackPath(demoted)))).toBe('forbidden');
      } finally {
        await t.prisma.member.update({ where: { id: admin.memberId }, data: { role: 'admin' } });
      }
      // A state used already (a reload of the callback) names no returnTo: a signed-in browser
      // goes to the connections page all the same; without a session cookie, JSON as before.
      const reloaded = await callbackIn(callbackPath(lured));
      expect(reloaded.headers.location).toBe('/admin/connections?oauthError=oauth_state_invalid');
      const unknown = await callbackIn(callbackPath(lured), null);
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json<{ error: { code: string } }>().error.code).toBe('oauth_state_invalid');

      expect(await t.prisma.connection.count({ where: { workspaceId: a.workspaceId } })).toBe(before);
    });

    it('start refuses a returnTo that is not a path of this app (no open redirect)', async () => {
      for (const returnTo of [
        'https://evil.example/admin',
        '//evil.example/admin',
        '/\\evil.example',
        '\\\\evil.example',
        'admin/connections',
        '/admin\n/connections',
        '/./\\evil.example',
        '',
        `/${'a'.repeat(2048)}`,
      ]) {
        const res = await call('POST', '/api/v1/connections/oauth/hubspot/start', {
          key: a.adminKey,
          payload: { returnTo },
        });
        expect(res.statusCode, JSON.stringify(returnTo)).toBe(400);
        const { error } = res.json<{ error: { code: string; message: string } }>();
        expect(error).toMatchObject({
          code: 'validation_failed',
          message: expect.stringContaining('returnTo'),
        });
      }
      const notBoolean = await call('POST', '/api/v1/connections/oauth/hubspot/start', {
        key: a.adminKey,
        payload: { dryRun: 'yes' },
      });
      expect(notBoolean.statusCode).toBe(400);
    });

    it('reconnect: a needs_reauth connection takes the new tokens of a consent to its account and syncs again', async () => {
      const connection = await t.prisma.connection.findFirstOrThrow({
        where: { workspaceId: a.workspaceId, provider: 'hubspot', externalAccountId: String(PORTAL_A) },
      });
      const before = await credentialsOf(connection.id);
      // As the workers leave it once the provider refused its tokens, after its backfill finished.
      await t.prisma.connection.update({
        where: { id: connection.id },
        data: {
          status: 'needs_reauth',
          statusReason: 'the provider refused the credentials',
          lastErrorCode: 'AuthRevoked',
          cursors: { live: { contacts: '2026-01-01T00:00:00.000Z' } },
        },
      });
      await t.pullQueue.getJob(pullJobIds(connection.id).primary).then((job) => job?.remove());

      const back = redirectedTo(
        await callbackIn(
          callbackPath(
            await startInBrowser('hubspot', { returnTo: '/admin/connections' }, { portalId: PORTAL_A }),
          ),
        ),
      );
      expect(back.searchParams.get('connected')).toBe(connection.id);
      expect(await t.prisma.connection.findUniqueOrThrow({ where: { id: connection.id } })).toMatchObject({
        status: 'live',
        statusReason: null,
        lastErrorCode: null,
        dryRun: false,
      });
      const after = await credentialsOf(connection.id);
      expect(after.accessToken).not.toBe(before.accessToken);
      // Pulled at once, from the cursor it kept.
      expect(await t.pullQueue.getJob(pullJobIds(connection.id).primary)).toBeDefined();
      const audit = await t.prisma.auditLog.findFirstOrThrow({
        where: { workspaceId: a.workspaceId, action: 'connection.oauth_connected', targetId: connection.id },
        orderBy: { createdAt: 'desc' },
      });
      expect(audit).toMatchObject({ actorUserId: admin.memberId, details: { reconnected: true } });
    });
  });

  it('only an admin key may start: sales gets 403, no key 401', async () => {
    const created = await call('POST', '/api/v1/api-keys', {
      key: a.adminKey,
      payload: { name: 'rep', role: 'sales' },
    });
    const salesKey = created.json<{ key: string }>().key;
    const sales = await call('POST', '/api/v1/connections/oauth/hubspot/start', { key: salesKey });
    expect(sales.statusCode).toBe(403);
    expect(sales.json()).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    const anonymous = await call('POST', '/api/v1/connections/oauth/google/start', {
      payload: { products: ['gmail'] },
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('start validates the provider and the products', async () => {
    const cases: [string, object | undefined, string][] = [
      ['salesforce', undefined, 'provider'],
      ['google', undefined, 'products'],
      ['google', { products: [] }, 'products'],
      ['google', { products: ['gmail', 'gmail'] }, 'products'],
      ['google', { products: ['hubspot'] }, 'products'],
      ['hubspot', { products: ['gmail'] }, 'products'],
    ];
    for (const [provider, payload, field] of cases) {
      const res = await call('POST', `/api/v1/connections/oauth/${provider}/start`, {
        key: a.adminKey,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${provider} ${JSON.stringify(payload)}`).toBe(400);
      const { error } = res.json<{ error: { code: string; message: string } }>();
      expect(error.code).toBe('validation_failed');
      expect(error.message).toContain(field);
    }
  });

  it('no response body or header and no log line holds a token or a PKCE verifier', () => {
    expect(tokens.size).toBeGreaterThanOrEqual(6);
    expect(verifiers.size).toBeGreaterThanOrEqual(15);
    const everything = [...bodies, ...headers, ...t.logs].join('\n');
    for (const secret of [...tokens, ...verifiers]) expect(everything).not.toContain(secret);
    expect(bodies.join('\n')).not.toMatch(/accessToken|refreshToken|ciphertext|verifier/i);
  });
});
