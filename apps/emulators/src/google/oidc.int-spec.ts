import { createHash, randomBytes } from 'node:crypto';
import {
  createRemoteJWKSet,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FaultKind } from '../common/faults';
import { readForm, signInAtGoogle } from './testing/consent-browser';
import { type CreatedUser, GoogleHarness } from './testing/google-harness';

// The emulator checked as an OpenID Connect provider against the published rules (Discovery
// 1.0, Core 1.0, RFC 7636), with `jose` and plain fetch rather than any client of ours.

const REDIRECT_URI = 'http://127.0.0.1:9/api/v1/auth/oidc/callback';
const SIGN_IN_SCOPE = 'openid email profile';

let google: GoogleHarness;
let client: { clientId: string; clientSecret: string };
type Json = Record<string, unknown>;
let discovery: Json;
let jwks: JWTVerifyGetKey;

beforeAll(async () => {
  google = await GoogleHarness.start();
  client = (await google.control<CreatedUser>('GET', '/_emulator/google/oauth-client')).body;
  discovery = (await (await fetch(`${google.url}/.well-known/openid-configuration`)).json()) as Json;
  jwks = createRemoteJWKSet(new URL(String(discovery.jwks_uri)));
});

afterAll(async () => {
  await google.close();
});

beforeEach(async () => {
  await google.control('POST', '/_emulator/reset');
});

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const random = () => randomBytes(32).toString('base64url');

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  authorizeUrl: URL;
}

/** An authorize request as a relying party builds it from the discovery document. */
function startFlow(extra: Record<string, string> = {}): Flow {
  const flow = { state: random(), nonce: random(), verifier: random() };
  const authorizeUrl = new URL(String(discovery.authorization_endpoint));
  for (const [name, value] of Object.entries({
    client_id: client.clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: SIGN_IN_SCOPE,
    state: flow.state,
    nonce: flow.nonce,
    code_challenge: s256(flow.verifier),
    code_challenge_method: 'S256',
    ...extra,
  })) {
    authorizeUrl.searchParams.set(name, value);
  }
  return { ...flow, authorizeUrl };
}

/** The token request, client_secret_basic. */
async function redeem(
  code: string,
  verifier: string | undefined,
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(String(discovery.token_endpoint), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(
        `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
      ).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      ...(verifier === undefined ? {} : { code_verifier: verifier }),
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A user allows a sign-in: the code the redirect carries, after checking its state. */
async function allowedCode(flow: Flow, email: string): Promise<string> {
  const back = await signInAtGoogle(flow.authorizeUrl, { email, decision: 'allow' });
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
  expect(back.searchParams.get('state')).toBe(flow.state);
  return back.searchParams.get('code') ?? '';
}

async function signIn(email: string): Promise<{ flow: Flow; tokens: Record<string, string> }> {
  const flow = startFlow();
  const code = await allowedCode(flow, email);
  const { status, body } = await redeem(code, flow.verifier);
  expect(status).toBe(200);
  return { flow, tokens: body };
}

/** OIDC Core §3.1.3.7, steps 1-10 that apply to a confidential client of one audience. */
async function validateIdToken(idToken: string, nonce: string): Promise<JWTPayload> {
  const { payload, protectedHeader } = await jwtVerify(idToken, jwks, {
    issuer: String(discovery.issuer),
    audience: client.clientId,
    algorithms: ['RS256'],
  });
  expect(protectedHeader.alg).toBe('RS256');
  expect(payload.azp).toBe(client.clientId);
  const now = Math.floor(Date.now() / 1000);
  expect(payload.exp).toBeGreaterThan(now);
  expect(Math.abs((payload.iat ?? 0) - now)).toBeLessThan(60);
  expect(payload.nonce).toBe(nonce);
  return payload;
}

/** §3.1.3.8: the left-most half of the SHA-256 of the access token, base64url. */
const expectedAtHash = (accessToken: string) =>
  createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');

describe('discovery (OpenID Connect Discovery 1.0)', () => {
  it('has every REQUIRED field of §3, and its issuer is the URL it was fetched from (§4.3)', async () => {
    const res = await fetch(`${google.url}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as Json;
    for (const field of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ]) {
      expect(doc, field).toHaveProperty(field);
    }
    expect(doc.issuer).toBe(google.url);
    expect(doc).toMatchObject({
      authorization_endpoint: `${google.url}/o/oauth2/v2/auth`,
      token_endpoint: `${google.url}/token`,
      userinfo_endpoint: `${google.url}/oauth2/v3/userinfo`,
      jwks_uri: `${google.url}/oauth2/v3/certs`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      code_challenge_methods_supported: expect.arrayContaining(['S256', 'plain']),
      token_endpoint_auth_methods_supported: expect.arrayContaining([
        'client_secret_post',
        'client_secret_basic',
      ]),
    });
    // RS256 MUST be included (§3).
    expect(doc.id_token_signing_alg_values_supported).toContain('RS256');
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    const jwkSet = (await (await fetch(String(doc.jwks_uri))).json()) as { keys: Json[] };
    expect(jwkSet.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
  });
});

describe('the authorization code flow with PKCE and a nonce', () => {
  it('shows the account chooser, then a consent page naming what the client asks for', async () => {
    await google.createUser('dana@example.com');
    const flow = startFlow();
    const chooser = await fetch(flow.authorizeUrl, { redirect: 'manual' });
    expect(chooser.status).toBe(200);
    const chooserHtml = await chooser.text();
    expect(chooserHtml).toContain('Choose an account');
    expect(chooserHtml).toContain('dana@example.com');
    const form = readForm(chooserHtml, flow.authorizeUrl);
    form.fields.set('login_hint', 'dana@example.com');
    const consent = await fetch(`${form.action.href}?${form.fields}`, { redirect: 'manual' });
    expect(consent.status).toBe(200);
    const html = (await consent.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(html).toContain('Syncline wants to: see your email address see your basic profile');
    expect(html).toContain('Deny Allow');
  });

  it('issues an id token that verifies against the JWKS and passes Core §3.1.3.7, with at_hash', async () => {
    await google.createUser('ada.lovelace@example.com', { name: 'Ada King Lovelace' });
    const { flow, tokens } = await signIn('ada.lovelace@example.com');
    expect(tokens).toMatchObject({
      token_type: 'Bearer',
      scope: SIGN_IN_SCOPE,
      id_token: expect.any(String),
    });
    const claims = await validateIdToken(tokens.id_token ?? '', flow.nonce);
    expect(claims).toMatchObject({
      sub: expect.stringMatching(/^\d+$/),
      email: 'ada.lovelace@example.com',
      email_verified: true,
      name: 'Ada King Lovelace',
      given_name: 'Ada',
      family_name: 'King Lovelace',
      hd: 'example.com',
      at_hash: expectedAtHash(tokens.access_token ?? ''),
    });

    // The access token opens userinfo for the same subject.
    const userinfo = await fetch(String(discovery.userinfo_endpoint), {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(await userinfo.json()).toMatchObject({ sub: claims.sub, email: 'ada.lovelace@example.com' });
  });

  it('names no hosted domain for a consumer account, and reports an unverified address as such', async () => {
    await google.createUser('someone@gmail.com', { emailVerified: false });
    const { flow, tokens } = await signIn('someone@gmail.com');
    const claims = await validateIdToken(tokens.id_token ?? '', flow.nonce);
    expect(claims.email_verified).toBe(false);
    expect(claims).not.toHaveProperty('hd');
  });

  it('accepts the plain PKCE method, and a code is good once', async () => {
    const flow = startFlow({ code_challenge_method: 'plain' });
    flow.authorizeUrl.searchParams.set('code_challenge', flow.verifier);
    const code = await allowedCode(flow, 'plain@example.com');
    expect((await redeem(code, flow.verifier)).status).toBe(200);
    expect(await redeem(code, flow.verifier)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('refuses a wrong or missing code_verifier with invalid_grant', async () => {
    const flow = startFlow();
    const code = await allowedCode(flow, 'dana@example.com');
    expect(await redeem(code, random())).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const again = startFlow();
    const second = await allowedCode(again, 'dana@example.com');
    expect(await redeem(second, undefined)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('sends the browser back with access_denied and the state when the user denies', async () => {
    const flow = startFlow();
    const back = await signInAtGoogle(flow.authorizeUrl, { email: 'dana@example.com', decision: 'deny' });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(back.searchParams)).toEqual({ state: flow.state, error: 'access_denied' });
  });

  it('shows the consent page even with login_hint when prompt=consent', async () => {
    const flow = startFlow({ login_hint: 'dana@example.com', prompt: 'consent' });
    const res = await fetch(flow.authorizeUrl, { redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('wants to:');
  });
});

describe('id-token faults', () => {
  const cases: { kind: FaultKind; wrong: (idToken: string, nonce: string) => Promise<void> }[] = [
    {
      kind: 'id-token-aud',
      wrong: async (idToken, nonce) => {
        const error = await validateIdToken(idToken, nonce).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
        expect((error as InstanceType<typeof joseErrors.JWTClaimValidationFailed>).claim).toBe('aud');
      },
    },
    {
      kind: 'id-token-iss',
      wrong: async (idToken, nonce) => {
        const error = await validateIdToken(idToken, nonce).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
        expect((error as InstanceType<typeof joseErrors.JWTClaimValidationFailed>).claim).toBe('iss');
      },
    },
    {
      kind: 'id-token-nonce',
      wrong: async (idToken, nonce) => {
        const { payload } = await jwtVerify(idToken, jwks, {
          issuer: String(discovery.issuer),
          audience: client.clientId,
        });
        expect(payload.nonce).toEqual(expect.any(String));
        expect(payload.nonce).not.toBe(nonce);
      },
    },
    {
      kind: 'id-token-signature',
      wrong: async (idToken, nonce) => {
        await expect(validateIdToken(idToken, nonce)).rejects.toBeInstanceOf(
          joseErrors.JWSSignatureVerificationFailed,
        );
      },
    },
    {
      kind: 'id-token-expired',
      wrong: async (idToken, nonce) => {
        await expect(validateIdToken(idToken, nonce)).rejects.toBeInstanceOf(joseErrors.JWTExpired);
      },
    },
  ];

  it.each(cases)(
    '$kind makes the next id token wrong in that one way, then passes',
    async ({ kind, wrong }) => {
      await google.fault({ kind, count: 1, account: 'dana@example.com' });
      const faulty = await signIn('dana@example.com');
      await wrong(faulty.tokens.id_token ?? '', faulty.flow.nonce);

      const next = await signIn('dana@example.com');
      await expect(validateIdToken(next.tokens.id_token ?? '', next.flow.nonce)).resolves.toMatchObject({
        email: 'dana@example.com',
      });
    },
  );
});
