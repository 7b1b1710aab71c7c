import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LoggedRequest } from '../../common/request-log';
import type { MicrosoftUser } from '../user.store';
import type { MicrosoftApp } from './apps.store';
import { IdentityHarness, type Json, REDIRECT_URI, randomString, s256 } from './testing/identity-harness';
import { signInAtMicrosoft } from './testing/sign-in-browser';

// The token endpoint as a confidential client calls it: codes, refresh tokens, client
// authentication, PKCE, and each refusal in the platform's error body.

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
  ada = await ms.addUser('ada@contoso.example');
});

const OFFLINE_SCOPE = 'offline_access User.Read Calendars.ReadWrite';

/** The user accepts at the consent page: the code the app receives. */
async function consentedCode(params: Record<string, string>, tenant = 'common'): Promise<string> {
  const back = await signInAtMicrosoft(
    ms.authorizeUrl(app, { state: 'st', login_hint: ada.userPrincipalName, ...params }, tenant),
    { decision: 'accept' },
  );
  const code = back.params.get('code');
  if (!code) throw new Error(`no code: ${back.params}`);
  return code;
}

const redeemCode = (code: string, extra: Record<string, string> = {}, tenant = 'common') =>
  ms.token(
    {
      grant_type: 'authorization_code',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
      redirect_uri: REDIRECT_URI,
      ...extra,
    },
    { tenant },
  );

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  ms.token({
    grant_type: 'refresh_token',
    client_id: app.clientId,
    client_secret: app.clientSecret,
    refresh_token: refreshToken,
    ...extra,
  });

/** A refusal in the platform's shape, with this AADSTS code. */
function expectRefusal(answer: { status: number; body: Json }, status: number, error: string, code: number) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({
    error,
    error_description: expect.stringMatching(
      new RegExp(`^AADSTS${code}: .+\\r\\nTrace ID: .+\\r\\nCorrelation ID: .+\\r\\nTimestamp: `),
    ),
    error_codes: [code],
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
    trace_id: expect.any(String),
    correlation_id: expect.any(String),
    error_uri: `https://login.microsoftonline.com/error?code=${code}`,
  });
}

describe('authorization_code', () => {
  it('redeems a code without offline_access for an access token alone', async () => {
    const answer = await redeemCode(await consentedCode({ scope: 'User.Read Calendars.ReadWrite' }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      token_type: 'Bearer',
      scope: 'User.Read Calendars.ReadWrite',
      expires_in: 3600,
      ext_expires_in: 3600,
      access_token: expect.any(String),
    });
  });

  it('adds a refresh token for offline_access, reporting Graph scopes by their short name', async () => {
    const answer = await redeemCode(
      await consentedCode({ scope: 'offline_access https://graph.microsoft.com/Calendars.ReadWrite' }),
    );
    expect(answer.body).toMatchObject({ scope: 'Calendars.ReadWrite', refresh_token: expect.any(String) });
    expect(answer.body).not.toHaveProperty('id_token');
    expect(await ms.graphAccepts(String(answer.body.access_token))).toBe(true);
  });

  it('redeems a code once: the second time is AADSTS54005', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    expect((await redeemCode(code)).status).toBe(200);
    expectRefusal(await redeemCode(code), 400, 'invalid_grant', 54005);
  });

  it('refuses a redirect_uri other than the authorize call’s, then still redeems the code with the right one', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    const wrong = await redeemCode(code, { redirect_uri: 'http://127.0.0.1:9/elsewhere' });
    expectRefusal(wrong, 400, 'invalid_grant', 50011);
    expect(String(wrong.body.error_description)).toContain(REDIRECT_URI);
    expect((await redeemCode(code)).status).toBe(200);
  });

  it('expires a code after ten minutes (AADSTS70008)', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    ms.advanceClock(10 * 60_000 + 1);
    expectRefusal(await redeemCode(code), 400, 'invalid_grant', 70008);
  });

  it('refuses unknown codes and missing parameters', async () => {
    expectRefusal(await redeemCode('1.Anot-a-code'), 400, 'invalid_grant', 9002313);
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    const noRedirect = await ms.token({
      grant_type: 'authorization_code',
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code,
    });
    expectRefusal(noRedirect, 400, 'invalid_request', 900144);
    expect(String(noRedirect.body.error_description)).toContain("'redirect_uri'");
  });

  it('redeems a code at the endpoint it came from or the user’s tenant, not another (AADSTS700005)', async () => {
    const elsewhere = await redeemCode(await consentedCode({ scope: OFFLINE_SCOPE }), {}, 'organizations');
    expectRefusal(elsewhere, 400, 'invalid_grant', 700005);
    const atOwnTenant = await redeemCode(await consentedCode({ scope: OFFLINE_SCOPE }), {}, ada.tenantId);
    expect(atOwnTenant.status).toBe(200);
  });
});

describe('PKCE', () => {
  it('checks an S256 verifier: a wrong or missing one is AADSTS501481, the right one redeems', async () => {
    const verifier = randomString();
    const code = await consentedCode({
      scope: OFFLINE_SCOPE,
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
    });
    expectRefusal(await redeemCode(code, { code_verifier: randomString() }), 400, 'invalid_grant', 501481);
    expectRefusal(await redeemCode(code), 400, 'invalid_grant', 501481);
    expect((await redeemCode(code, { code_verifier: verifier })).status).toBe(200);
  });

  it('takes a challenge without a method as plain', async () => {
    const verifier = randomString();
    const code = await consentedCode({ scope: OFFLINE_SCOPE, code_challenge: verifier });
    expectRefusal(await redeemCode(code, { code_verifier: s256(verifier) }), 400, 'invalid_grant', 501481);
    expect((await redeemCode(code, { code_verifier: verifier })).status).toBe(200);
  });
});

describe('client authentication', () => {
  it('answers a wrong secret 401 invalid_client AADSTS7000215, and a missing one AADSTS7000218', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    expectRefusal(
      await redeemCode(code, { client_secret: 'not-the-secret' }),
      401,
      'invalid_client',
      7000215,
    );
    const { client_secret: _, ...withoutSecret } = {
      grant_type: 'authorization_code',
      client_id: app.clientId,
      client_secret: '',
      code,
      redirect_uri: REDIRECT_URI,
    };
    expectRefusal(await ms.token(withoutSecret), 401, 'invalid_client', 7000218);
    expectRefusal(await redeemCode(code, { client_id: 'no-such-app' }), 400, 'unauthorized_client', 700016);
  });

  it('takes the client credentials as HTTP Basic too', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    const basic = Buffer.from(`${app.clientId}:${encodeURIComponent(app.clientSecret)}`).toString('base64');
    const answer = await ms.token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
      { headers: { authorization: `Basic ${basic}` } },
    );
    expect(answer.status).toBe(200);
  });

  it('refuses unknown and missing grant types, and echoes the client-request-id as correlation_id', async () => {
    const password = await ms.token(
      { grant_type: 'password', client_id: app.clientId, client_secret: app.clientSecret },
      { headers: { 'client-request-id': 'c0ffee00-0000-4000-8000-000000000001' } },
    );
    expectRefusal(password, 400, 'unsupported_grant_type', 70003);
    expect(password.body.correlation_id).toBe('c0ffee00-0000-4000-8000-000000000001');
    expectRefusal(await ms.token({ client_id: app.clientId }), 400, 'invalid_request', 900144);
  });

  it('reads only a form-encoded body: the same request as JSON has no grant_type', async () => {
    const code = await consentedCode({ scope: OFFLINE_SCOPE });
    const res = await fetch(`${ms.url}/common/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
        redirect_uri: REDIRECT_URI,
      }),
    });
    expectRefusal({ status: res.status, body: (await res.json()) as Json }, 400, 'invalid_request', 900144);
    expect((await redeemCode(code)).status).toBe(200);
  });
});

describe('refresh_token', () => {
  it('replaces the refresh token on every use while the old one keeps working', async () => {
    const first = (await redeemCode(await consentedCode({ scope: `openid ${OFFLINE_SCOPE}` }))).body;
    const second = await refresh(String(first.refresh_token));
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      token_type: 'Bearer',
      scope: 'openid User.Read Calendars.ReadWrite',
      expires_in: 3600,
      ext_expires_in: 3600,
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      id_token: expect.any(String),
    });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);

    const again = await refresh(String(first.refresh_token));
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).not.toBe(second.body.refresh_token);
    for (const token of [first.access_token, second.body.access_token, again.body.access_token]) {
      expect(await ms.graphAccepts(String(token))).toBe(true);
    }
    expect(await ms.graphAccepts('eyJ0eXAi.not-a-token')).toBe(false);
  });

  it('gives a grant without offline_access no refresh token, even when refreshed', async () => {
    const grant = await ms.control<{ refreshToken: string }>(
      'POST',
      `/_emulator/microsoft/users/${ada.userPrincipalName}/grants`,
      { clientId: app.clientId, scopes: ['User.Read'] },
    );
    const answer = await refresh(grant.body.refreshToken);
    expect(answer.status).toBe(200);
    expect(answer.body).not.toHaveProperty('refresh_token');
  });

  it.each([
    ['revoked', 50173],
    ['expired', 700082],
    ['no-consent', 65001],
  ] as const)(
    'answers a %s grant invalid_grant AADSTS%i, for old and new refresh tokens alike',
    async (reason, code) => {
      const first = (await redeemCode(await consentedCode({ scope: OFFLINE_SCOPE }))).body;
      const second = (await refresh(String(first.refresh_token))).body;
      const failed = await ms.control(
        'POST',
        `/_emulator/microsoft/users/${ada.userPrincipalName}/grants/fail`,
        {
          reason,
        },
      );
      expect(failed.status).toBe(204);
      expectRefusal(await refresh(String(first.refresh_token)), 400, 'invalid_grant', code);
      expectRefusal(await refresh(String(second.refresh_token)), 400, 'invalid_grant', code);
      expect(await ms.graphAccepts(String(second.access_token))).toBe(false);
    },
  );

  it('revokes the grant on the revoke-token fault, and logs the refresh under the user', async () => {
    const first = (await redeemCode(await consentedCode({ scope: OFFLINE_SCOPE }))).body;
    await ms.control('POST', '/_emulator/faults', {
      service: 'microsoft',
      kind: 'revoke-token',
      account: ada.userPrincipalName,
      count: 1,
    });
    expectRefusal(await refresh(String(first.refresh_token)), 400, 'invalid_grant', 50173);
    expectRefusal(await refresh(String(first.refresh_token)), 400, 'invalid_grant', 50173);
    const logged = await ms.control<LoggedRequest[]>(
      'GET',
      `/_emulator/requests?service=microsoft&account=${ada.userPrincipalName}`,
    );
    expect(logged.body.map((r) => `${r.method} ${r.path} ${r.status}`).slice(-3)).toEqual([
      'POST /common/oauth2/v2.0/token 200',
      'POST /common/oauth2/v2.0/token 400',
      'POST /common/oauth2/v2.0/token 400',
    ]);
  });

  it('refuses an unknown token, another app’s token, and scopes the user never consented to', async () => {
    const first = (await redeemCode(await consentedCode({ scope: OFFLINE_SCOPE }))).body;
    expectRefusal(await refresh('M.R3_BAY.unknown'), 400, 'invalid_grant', 9002313);
    const other = await ms.registerApp();
    const stolen = await ms.token({
      grant_type: 'refresh_token',
      client_id: other.clientId,
      client_secret: other.clientSecret,
      refresh_token: String(first.refresh_token),
    });
    expectRefusal(stolen, 400, 'invalid_grant', 9002313);
    expectRefusal(
      await refresh(String(first.refresh_token), { scope: 'Mail.Send' }),
      400,
      'invalid_grant',
      65001,
    );
    const narrower = await refresh(String(first.refresh_token), {
      scope: 'offline_access Calendars.ReadWrite',
    });
    expect(narrower.status).toBe(200);
  });
});
