import { createRemoteJWKSet, decodeJwt, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MicrosoftUser } from '../user.store';
import { PERSONAL_TENANT } from '../user.store';
import type { MicrosoftApp } from './apps.store';
import { IdentityHarness, type Json, REDIRECT_URI, randomString } from './testing/identity-harness';
import { signInAtMicrosoft } from './testing/sign-in-browser';

// The emulator as an OpenID Connect provider, checked with `jose` against what it publishes:
// discovery per tenant endpoint, the keys, and id tokens a relying party validates the way
// Microsoft's guidance says (issuer from the token's tid, audience, nonce, keyed on tid + oid).

let ms: IdentityHarness;
let app: MicrosoftApp;
let ada: MicrosoftUser;

beforeAll(async () => {
  ms = await IdentityHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  app = await ms.registerApp();
  ada = await ms.addUser('ada@contoso.example', { displayName: 'Ada Lovelace' });
});

const discovery = async (tenant: string): Promise<Json> => {
  const res = await fetch(`${ms.url}/${tenant}/v2.0/.well-known/openid-configuration`);
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
};

/** Signs in through the pages and redeems the code: the token response. */
async function signIn(
  scope: string,
  options: { user?: MicrosoftUser; client?: MicrosoftApp; tenant?: string; nonce?: string } = {},
): Promise<Json> {
  const client = options.client ?? app;
  const user = options.user ?? ada;
  const tenant = options.tenant ?? 'common';
  const back = await signInAtMicrosoft(
    ms.authorizeUrl(
      client,
      { scope, login_hint: user.userPrincipalName, ...(options.nonce ? { nonce: options.nonce } : {}) },
      tenant,
    ),
    { decision: 'accept' },
  );
  const answer = await ms.token(
    {
      grant_type: 'authorization_code',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      code: back.params.get('code') ?? '',
      redirect_uri: REDIRECT_URI,
    },
    { tenant },
  );
  expect(answer.status).toBe(200);
  return answer.body;
}

/** What an app does with an id token from a multi-tenant endpoint: the issuer is its tid's. */
async function validate(idToken: string, tenant = 'common'): Promise<JWTPayload> {
  const doc = await discovery(tenant);
  const { tid } = decodeJwt(idToken);
  const { payload, protectedHeader } = await jwtVerify(
    idToken,
    createRemoteJWKSet(new URL(String(doc.jwks_uri))),
    {
      issuer: String(doc.issuer).replace('{tenantid}', String(tid)),
      audience: app.clientId,
      algorithms: ['RS256'],
    },
  );
  expect(protectedHeader).toMatchObject({ typ: 'JWT', alg: 'RS256', kid: expect.any(String) });
  return payload;
}

describe('discovery and keys', () => {
  it('publishes a {tenantid} issuer for common and organizations, a concrete one for a tenant and consumers', async () => {
    const common = await discovery('common');
    expect(common).toMatchObject({
      issuer: `${ms.url}/{tenantid}/v2.0`,
      authorization_endpoint: `${ms.url}/common/oauth2/v2.0/authorize`,
      token_endpoint: `${ms.url}/common/oauth2/v2.0/token`,
      jwks_uri: `${ms.url}/common/discovery/v2.0/keys`,
      userinfo_endpoint: `${ms.url}/oidc/userinfo`,
      response_types_supported: ['code'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    expect((await discovery('organizations')).issuer).toBe(`${ms.url}/{tenantid}/v2.0`);
    expect((await discovery(ada.tenantId)).issuer).toBe(`${ms.url}/${ada.tenantId}/v2.0`);
    expect((await discovery('consumers')).issuer).toBe(`${ms.url}/${PERSONAL_TENANT}/v2.0`);

    const unknown = await fetch(`${ms.url}/contoso/v2.0/.well-known/openid-configuration`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_tenant', error_codes: [90002] });
  });

  it('publishes an RSA signing key with its kid', async () => {
    const res = await fetch(`${ms.url}/common/discovery/v2.0/keys`);
    const { keys } = (await res.json()) as { keys: Json[] };
    expect(keys).toEqual([
      {
        kty: 'RSA',
        use: 'sig',
        kid: expect.any(String),
        x5t: expect.any(String),
        n: expect.any(String),
        e: 'AQAB',
        issuer: `${ms.url}/{tenantid}/v2.0`,
      },
    ]);
  });
});

describe('id tokens', () => {
  it('names the user by oid, tid and preferred_username, for this app and this nonce', async () => {
    const nonce = randomString();
    const tokens = await signIn('openid profile email offline_access User.Read', { nonce });
    const claims = await validate(String(tokens.id_token));
    expect(claims).toMatchObject({
      aud: app.clientId,
      iss: `${ms.url}/${ada.tenantId}/v2.0`,
      nonce,
      oid: ada.id,
      tid: ada.tenantId,
      preferred_username: 'ada@contoso.example',
      name: 'Ada Lovelace',
      email: 'ada@contoso.example',
      ver: '2.0',
    });
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs((claims.iat ?? 0) - now)).toBeLessThan(60);
    expect(claims.nbf).toBe(claims.iat);
    expect(claims.exp).toBe((claims.iat ?? 0) + 3600);
  });

  it('gives oid, names and the address only for the profile and email scopes', async () => {
    const tokens = await signIn('openid User.Read');
    const claims = await validate(String(tokens.id_token));
    expect(claims.tid).toBe(ada.tenantId);
    expect(claims.sub).toEqual(expect.any(String));
    for (const absent of ['oid', 'preferred_username', 'name', 'email', 'nonce']) {
      expect(claims, absent).not.toHaveProperty(absent);
    }
    expect(tokens).not.toHaveProperty('refresh_token');
  });

  it('keeps sub per app (pairwise) and oid across a change of sign-in name', async () => {
    const first = await validate(String((await signIn('openid profile')).id_token));
    const renamed = await ms.control('PATCH', `/_emulator/microsoft/users/${ada.userPrincipalName}`, {
      userPrincipalName: 'ada.king@contoso.example',
    });
    expect(renamed.status).toBe(200);
    const renamedAda = { ...ada, userPrincipalName: 'ada.king@contoso.example' };
    const second = await validate(String((await signIn('openid profile', { user: renamedAda })).id_token));
    expect(second).toMatchObject({
      oid: first.oid,
      sub: first.sub,
      preferred_username: 'ada.king@contoso.example',
    });

    const otherApp = await ms.registerApp();
    const third = decodeJwt(
      String((await signIn('openid profile', { user: renamedAda, client: otherApp })).id_token),
    );
    expect(third.oid).toBe(first.oid);
    expect(third.sub).not.toBe(first.sub);
  });

  it('names the personal-account tenant for a consumer signed in at consumers', async () => {
    const sam = await ms.addUser('sam@outlook.example', { tenantId: PERSONAL_TENANT });
    const tokens = await signIn('openid profile', { user: sam, tenant: 'consumers' });
    const claims = await validate(String(tokens.id_token), 'consumers');
    expect(claims).toMatchObject({
      iss: `${ms.url}/${PERSONAL_TENANT}/v2.0`,
      tid: PERSONAL_TENANT,
      oid: sam.id,
    });
  });

  it('signs a fresh id token on refresh, without the nonce of the sign-in', async () => {
    const tokens = await signIn('openid profile offline_access', { nonce: 'n-1' });
    const refreshed = await ms.token({
      grant_type: 'refresh_token',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      refresh_token: String(tokens.refresh_token),
    });
    const claims = await validate(String(refreshed.body.id_token));
    expect(claims.oid).toBe(ada.id);
    expect(claims).not.toHaveProperty('nonce');
  });
});

describe('userinfo', () => {
  it('answers the id token’s sub with the profile, and 401 to a token Graph does not know', async () => {
    const tokens = await signIn('openid profile offline_access');
    const claims = decodeJwt(String(tokens.id_token));
    const res = await fetch(`${ms.url}/oidc/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      sub: claims.sub,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
    });
    const unknown = await fetch(`${ms.url}/oidc/userinfo`, { headers: { authorization: 'Bearer nope' } });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: { code: 'InvalidAuthenticationToken' } });
  });
});
