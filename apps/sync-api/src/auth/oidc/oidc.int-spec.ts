import type { WorkspaceId } from '@syncline/core';
import { emulatorControl, type RunningEmulators, signInAtGoogle, startEmulators } from '@syncline/emulators';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../../../../../test/support/env';
import { MembersRepository } from '../../members/members.repository';
import { seedWorkspace, startTestApp, type TestApp } from '../../testing/test-app';
import { oidcStateKey } from './oidc-state.repository';

// "Sign in with Google" end to end against the Google emulator as the OpenID Connect provider:
// the browser is played by hand (app.inject for the API, fetch for the emulator's pages).

const ADMIN = 'admin@acme.test';
const BINDING_COOKIE = 'syncline_oidc';
const SESSION_COOKIE = 'syncline_session';

let emulators: RunningEmulators;
let google: ReturnType<typeof emulatorControl>;
let t: TestApp;
let workspaceId: string;

beforeAll(async () => {
  emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  google = emulatorControl(emulators.googleUrl);
  const client = await google<{ clientId: string; clientSecret: string }>(
    'GET',
    '/_emulator/google/oauth-client',
  );
  t = await startTestApp('oidc', {
    OIDC_ISSUER_URL: emulators.googleUrl,
    OIDC_CLIENT_ID: client.clientId,
    OIDC_CLIENT_SECRET: client.clientSecret,
    AUTH_ALLOWED_DOMAINS: 'acme.test',
  });
  ({ workspaceId } = await seedWorkspace(t.prisma, 'Acme'));
  // A member whose domain AUTH_ALLOWED_DOMAINS leaves out.
  await t.app
    .get(MembersRepository)
    .invite(workspaceId as WorkspaceId, { email: 'ada@elsewhere.test', name: 'Ada', role: 'sales' });
});

afterAll(async () => {
  await t?.close();
  await emulators?.close();
});

beforeEach(async () => {
  await google('POST', '/_emulator/reset');
});

interface Browser {
  /** The binding cookie the start set, as the browser sends it back. */
  cookie: string;
  authorizeUrl: URL;
}

async function start(returnTo?: string): Promise<Browser> {
  const query = returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`;
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/auth/oidc/start${query}` });
  expect(res.statusCode, res.body).toBe(302);
  const binding = res.cookies.find((c) => c.name === BINDING_COOKIE);
  expect(binding).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 600 });
  return {
    cookie: `${BINDING_COOKIE}=${binding?.value}`,
    authorizeUrl: new URL(String(res.headers.location)),
  };
}

/** The browser arriving back from the provider at the callback, with the cookies it holds. */
async function callback(back: URL, cookie: string | undefined) {
  expect(back.pathname).toBe('/api/v1/auth/oidc/callback');
  const res = await t.app.inject({
    method: 'GET',
    url: `${back.pathname}${back.search}`,
    headers: cookie === undefined ? {} : { cookie },
  });
  expect(res.statusCode, res.body).toBe(302);
  const session = res.cookies.find((c) => c.name === SESSION_COOKIE);
  return { location: String(res.headers.location), session, cookies: res.cookies };
}

async function signIn(email: string, decision: 'allow' | 'deny' = 'allow', returnTo?: string) {
  const browser = await start(returnTo);
  const back = await signInAtGoogle(browser.authorizeUrl, { email, decision });
  return callback(back, browser.cookie);
}

const sessionsOf = (email: string) => t.prisma.userSession.count({ where: { member: { email } } });

describe('GET /api/v1/auth/providers', () => {
  it('offers Google and the magic link, without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/auth/providers' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ oidc: { enabled: true, label: 'Google' }, magicLink: { enabled: true } });
  });
});

describe('signing in with Google', () => {
  it('goes from the start through consent to a session that authenticates, landing on returnTo', async () => {
    const browser = await start('/people?owner=me');
    const authorize = browser.authorizeUrl;
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${emulators.googleUrl}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      redirect_uri: 'http://127.0.0.1:3000/api/v1/auth/oidc/callback',
      state: expect.any(String),
      nonce: expect.any(String),
      code_challenge: expect.any(String),
    });

    const back = await signInAtGoogle(authorize, { email: ADMIN, decision: 'allow' });
    const { location, session, cookies } = await callback(back, browser.cookie);
    expect(location).toBe('/people?owner=me');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // The binding cookie is spent.
    expect(cookies.find((c) => c.name === BINDING_COOKIE)?.value).toBe('');

    const me = await t.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { cookie: `${SESSION_COOKIE}=${session?.value}` },
    });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ workspaceId, role: 'admin', actor: { kind: 'member' } });
  });

  it('lands on / when returnTo is not a path of this app', async () => {
    for (const returnTo of ['https://evil.example/', '//evil.example', '/\\evil.example']) {
      expect((await signIn(ADMIN, 'allow', returnTo)).location).toBe('/');
    }
  });

  it('refuses an address Google does not vouch for (email_unverified)', async () => {
    await google('POST', '/_emulator/google/users', { email: ADMIN, emailVerified: false });
    const before = await sessionsOf(ADMIN);
    const result = await signIn(ADMIN);
    expect(result.location).toBe('/sign-in?error=email_unverified');
    expect(result.session).toBeUndefined();
    expect(await sessionsOf(ADMIN)).toBe(before);
  });

  it('refuses a member whose domain is not in AUTH_ALLOWED_DOMAINS (domain_not_allowed)', async () => {
    const result = await signIn('ada@elsewhere.test');
    expect(result.location).toBe('/sign-in?error=domain_not_allowed');
    expect(result.session).toBeUndefined();
    expect(await sessionsOf('ada@elsewhere.test')).toBe(0);
  });

  it('accepts a pending invitation on the first sign-in', async () => {
    await t.app
      .get(MembersRepository)
      .invite(workspaceId as WorkspaceId, { email: 'bea@acme.test', name: null, role: 'sales' });
    const result = await signIn('bea@acme.test');
    expect(result.location).toBe('/');
    expect(result.session).toBeDefined();
    expect(await t.prisma.member.findFirst({ where: { email: 'bea@acme.test' } })).toMatchObject({
      status: 'active',
      role: 'sales',
    });
  });

  it('refuses an address with no membership or invitation (not_a_member)', async () => {
    const result = await signIn('stranger@acme.test');
    expect(result.location).toBe('/sign-in?error=not_a_member');
    expect(result.session).toBeUndefined();
  });

  it('ends on access_denied when the person denies at the consent page', async () => {
    const result = await signIn(ADMIN, 'deny');
    expect(result.location).toBe('/sign-in?error=access_denied');
    expect(result.session).toBeUndefined();
  });
});

describe('a wrong id token', () => {
  it.each([
    'id-token-aud',
    'id-token-iss',
    'id-token-nonce',
    'id-token-signature',
    'id-token-expired',
  ] as const)('%s is refused: no session, invalid_token, logged without secrets', async (kind) => {
    await google('POST', '/_emulator/faults', { service: 'google', kind, count: 1, account: ADMIN });
    const before = await sessionsOf(ADMIN);
    const browser = await start();
    const back = await signInAtGoogle(browser.authorizeUrl, { email: ADMIN, decision: 'allow' });
    const logsBefore = t.logs.length;
    const result = await callback(back, browser.cookie);
    expect(result.location).toBe('/sign-in?error=invalid_token');
    expect(result.session).toBeUndefined();
    expect(await sessionsOf(ADMIN)).toBe(before);

    const logged = t.logs.slice(logsBefore).join('\n');
    expect(logged).toContain('OpenID Connect sign-in refused');
    expect(logged).toContain('"code":"invalid_token"');
    for (const secret of [back.searchParams.get('code'), back.searchParams.get('state'), browser.cookie]) {
      expect(logged).not.toContain(secret);
    }
    // The fault was for one token: the next sign-in works.
    expect((await signIn(ADMIN)).session).toBeDefined();
  });
});

describe('the state and the browser it is bound to', () => {
  it('refuses a callback without the binding cookie (invalid_state)', async () => {
    const browser = await start();
    const back = await signInAtGoogle(browser.authorizeUrl, { email: ADMIN, decision: 'allow' });
    const result = await callback(back, undefined);
    expect(result.location).toBe('/sign-in?error=invalid_state');
    expect(result.session).toBeUndefined();
  });

  it("refuses a callback carrying another browser's cookie, and the state is then spent", async () => {
    const victim = await start();
    const attacker = await start();
    const back = await signInAtGoogle(attacker.authorizeUrl, { email: ADMIN, decision: 'allow' });
    // The attacker's finished consent, replayed in the victim's browser (login CSRF).
    expect((await callback(back, victim.cookie)).location).toBe('/sign-in?error=invalid_state');
    expect((await callback(back, attacker.cookie)).location).toBe('/sign-in?error=invalid_state');
  });

  it("keeps the PKCE verifier sealed, bound to its state: a record copied onto another state's key is refused", async () => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const key = (url: URL) => `${t.config.REDIS_PREFIX}:${oidcStateKey(url.searchParams.get('state')!)}`;
      const one = await start();
      const two = await start();
      const stored = JSON.parse((await redis.get(key(one.authorizeUrl)))!) as { codeVerifier: unknown };
      expect(stored.codeVerifier).toMatchObject({
        keyId: expect.any(String),
        ciphertext: expect.any(String),
      });
      // Over the other state's record: its consent comes back to a verifier that does not open.
      expect(await redis.set(key(two.authorizeUrl), JSON.stringify(stored), 'KEEPTTL')).toBe('OK');
      const back = await signInAtGoogle(two.authorizeUrl, { email: ADMIN, decision: 'allow' });
      const result = await callback(back, two.cookie);
      expect(result.location).toBe('/sign-in?error=invalid_state');
      expect(result.session).toBeUndefined();
    } finally {
      redis.disconnect();
    }
  });

  it('takes a state once, and refuses one it never issued', async () => {
    const browser = await start();
    const back = await signInAtGoogle(browser.authorizeUrl, { email: ADMIN, decision: 'allow' });
    expect((await callback(back, browser.cookie)).session).toBeDefined();
    expect((await callback(back, browser.cookie)).location).toBe('/sign-in?error=invalid_state');

    const forged = new URL(back);
    forged.searchParams.set('state', 'never-issued');
    expect((await callback(forged, browser.cookie)).location).toBe('/sign-in?error=invalid_state');
  });
});

describe('without OIDC_ISSUER_URL', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startTestApp('oidc_off');
  });
  afterAll(async () => {
    await plain?.close();
  });

  it('offers only the magic link, and the start goes back to the sign-in page', async () => {
    const providers = await plain.app.inject({ method: 'GET', url: '/api/v1/auth/providers' });
    expect(providers.json()).toEqual({
      oidc: { enabled: false, label: 'Google' },
      magicLink: { enabled: true },
    });
    const res = await plain.app.inject({ method: 'GET', url: '/api/v1/auth/oidc/start' });
    expect([res.statusCode, res.headers.location]).toEqual([302, '/sign-in?error=oidc_disabled']);
    expect(res.cookies).toEqual([]);
  });
});
