import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LoggedRequest } from '../../common/request-log';
import type { MicrosoftUser } from '../user.store';
import { PERSONAL_TENANT } from '../user.store';
import type { MicrosoftApp } from './apps.store';
import { IdentityHarness, REDIRECT_URI } from './testing/identity-harness';
import { followAnswer, signInAtMicrosoft } from './testing/sign-in-browser';

// The sign-in pages as a browser meets them: the account picker, the consent page, and
// every refusal, either as an error page (the app cannot be trusted with it) or back on the
// redirect URI.

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
  app = await ms.registerApp({ displayName: 'Syncline test' });
  ada = await ms.addUser('ada@contoso.example', { displayName: 'Ada Lovelace' });
});

const SCOPE = 'openid profile offline_access User.Read Calendars.ReadWrite';

/** The page an authorize URL shows, without following anything. */
async function visit(url: URL): Promise<{ status: number; html: string; location: string | null }> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
}

describe('accept and cancel', () => {
  it('picks the account on the picker, shows the scopes, and answers Accept with a code and the state', async () => {
    await ms.addUser('grace@contoso.example');
    const url = ms.authorizeUrl(app, { scope: SCOPE, state: 'st-1' });
    const picker = await visit(url);
    expect(picker.status).toBe(200);
    expect(picker.html).toContain('Pick an account');
    expect(picker.html).toContain('ada@contoso.example');
    expect(picker.html).toContain('grace@contoso.example');

    const chosen = new URL(url);
    chosen.searchParams.set('login_hint', ada.userPrincipalName);
    const consent = await visit(chosen);
    expect(consent.html).toContain('Permissions requested');
    expect(consent.html).toContain('Syncline test would like to:');
    for (const wording of [
      'Have full access to your calendars',
      'Maintain access to data you have given it access to',
      'Sign you in and read your profile',
    ]) {
      expect(consent.html).toContain(wording);
    }

    const back = await signInAtMicrosoft(url, { upn: ada.userPrincipalName, decision: 'accept' });
    expect(back.via).toBe('query');
    expect(back.redirectUri).toBe(REDIRECT_URI);
    expect([...back.params.keys()]).toEqual(['code', 'state']);
    expect(back.params.get('state')).toBe('st-1');
    expect(back.params.get('code')).toMatch(/^\S{40,}$/);
  });

  it('goes straight to consent when login_hint names a user, and back to the picker on prompt=select_account', async () => {
    const hinted = await visit(ms.authorizeUrl(app, { scope: SCOPE, login_hint: 'ADA@contoso.example' }));
    expect(hinted.html).toContain('Permissions requested');
    const again = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName, prompt: 'select_account' }),
    );
    expect(again.html).toContain('Pick an account');
    const unknown = await visit(ms.authorizeUrl(app, { scope: SCOPE, login_hint: 'nobody@contoso.example' }));
    expect(unknown.html).toContain('Pick an account');
    expect(unknown.html).toContain('AADSTS50034');
  });

  it('answers Cancel with access_denied and AADSTS65004, keeping the state', async () => {
    const back = await signInAtMicrosoft(
      ms.authorizeUrl(app, { scope: SCOPE, state: 'st-2', login_hint: ada.userPrincipalName }),
      { decision: 'cancel' },
    );
    expect(Object.fromEntries(back.params)).toEqual({
      error: 'access_denied',
      error_description: 'AADSTS65004: User declined to consent to access the app.',
      state: 'st-2',
    });
  });

  it('answers by fragment or by a self-posting form when response_mode asks', async () => {
    const fragment = await signInAtMicrosoft(
      ms.authorizeUrl(app, {
        scope: SCOPE,
        state: 'f',
        response_mode: 'fragment',
        login_hint: ada.userPrincipalName,
      }),
      { decision: 'accept' },
    );
    expect(fragment.via).toBe('fragment');
    expect(fragment.params.get('code')).toBeTruthy();
    expect(fragment.params.get('state')).toBe('f');

    const posted = await signInAtMicrosoft(
      ms.authorizeUrl(app, {
        scope: SCOPE,
        state: 'p',
        response_mode: 'form_post',
        login_hint: ada.userPrincipalName,
      }),
      { decision: 'accept' },
    );
    expect(posted.via).toBe('form_post');
    expect(posted.redirectUri).toBe(REDIRECT_URI);
    expect(posted.params.get('code')).toBeTruthy();
    expect(posted.params.get('state')).toBe('p');
  });

  it('accepts an http loopback redirect URI on any port, as registered without one', async () => {
    const native = await ms.registerApp({ redirectUris: ['http://localhost/callback'] });
    const url = ms.authorizeUrl(native, {
      scope: SCOPE,
      redirect_uri: 'http://localhost:53123/callback',
      login_hint: ada.userPrincipalName,
    });
    const back = await signInAtMicrosoft(url, { decision: 'accept' });
    expect(back.redirectUri).toBe('http://localhost:53123/callback');
    const https = await visit(
      ms.authorizeUrl(native, { scope: SCOPE, redirect_uri: 'https://localhost:53123/callback' }),
    );
    expect(https.html).toContain('AADSTS50011');
  });

  it('has an app of its own, the same after a reset, that any local API may redirect to', async () => {
    const own = (
      await ms.control<{ clientId: string; clientSecret: string }>('GET', '/_emulator/microsoft/oauth-client')
    ).body;
    expect(own.clientId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    const builtIn = { ...app, clientId: own.clientId, clientSecret: own.clientSecret, redirectUris: [] };
    const url = ms.authorizeUrl(builtIn, {
      scope: SCOPE,
      redirect_uri: 'http://127.0.0.1:40123/api/v1/connections/oauth/microsoft/callback',
      login_hint: ada.userPrincipalName,
    });
    const back = await signInAtMicrosoft(url, { decision: 'accept' });
    expect(back.redirectUri).toBe('http://127.0.0.1:40123/api/v1/connections/oauth/microsoft/callback');
    expect(back.params.get('code')).toBeTruthy();
    const elsewhere = await visit(
      ms.authorizeUrl(builtIn, { scope: SCOPE, redirect_uri: 'https://sync.example.com/callback' }),
    );
    expect(elsewhere.html).toContain('AADSTS50011');
    await ms.reset();
    expect((await ms.control('GET', '/_emulator/microsoft/oauth-client')).body).toEqual(own);
  });

  it('logs the sign-in pages under the account, as microsoft', async () => {
    await signInAtMicrosoft(ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName }), {
      decision: 'accept',
    });
    const logged = await ms.control<LoggedRequest[]>('GET', `/_emulator/requests?service=microsoft`);
    expect(logged.body.map((r) => [r.method, r.path.split('?')[0], r.status, r.account])).toEqual([
      ['GET', '/common/oauth2/v2.0/authorize', 200, ada.userPrincipalName],
      ['POST', '/common/Consent/Set', 302, ada.userPrincipalName],
    ]);
  });
});

describe('refusals shown as a page (never a redirect)', () => {
  it.each<[string, Record<string, string>, string, string]>([
    ['an unknown client', { client_id: '00000000-0000-0000-0000-000000000000' }, 'common', 'AADSTS700016'],
    ['a redirect URI not registered', { redirect_uri: 'https://evil.example/cb' }, 'common', 'AADSTS50011'],
    ['no redirect URI', { redirect_uri: '' }, 'common', 'AADSTS900971'],
    ['an unknown tenant name', {}, 'not-a-tenant', 'AADSTS90002'],
  ])('%s', async (_what, params, tenant, code) => {
    const url = ms.authorizeUrl(app, { scope: SCOPE, state: 's', ...params }, tenant);
    if (params.redirect_uri === '') url.searchParams.delete('redirect_uri');
    const page = await visit(url);
    expect(page.status).toBe(400);
    expect(page.location).toBeNull();
    expect(page.html).toContain(`${code}:`);
  });

  it('refuses a user of another tenant at a tenant id (AADSTS50020), and each account type at the wrong endpoint', async () => {
    const otherTenant = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const wrongTenant = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName }, otherTenant),
    );
    expect(wrongTenant.status).toBe(400);
    expect(wrongTenant.html).toContain('AADSTS50020');
    expect(wrongTenant.html).toContain(otherTenant);

    const ownTenant = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName }, ada.tenantId),
    );
    expect(ownTenant.html).toContain('Permissions requested');

    const personal = await ms.addUser('sam@outlook.example', { tenantId: PERSONAL_TENANT });
    const atOrganizations = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: personal.userPrincipalName }, 'organizations'),
    );
    expect(atOrganizations.html).toContain('AADSTS500208');
    const workAtConsumers = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName }, 'consumers'),
    );
    expect(workAtConsumers.html).toContain('AADSTS500208');
    const personalAtConsumers = await visit(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: personal.userPrincipalName }, 'consumers'),
    );
    expect(personalAtConsumers.html).toContain('Permissions requested');
  });

  it('refuses a consent posted for a user of another tenant, not only the page that shows it', async () => {
    const otherTenant = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const form = new URLSearchParams(
      ms.authorizeUrl(app, { scope: SCOPE, login_hint: ada.userPrincipalName }, otherTenant).searchParams,
    );
    form.set('decision', 'accept');
    const res = await fetch(`${ms.url}/${otherTenant}/Consent/Set`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'manual',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('AADSTS50020');
  });
});

describe('refusals sent back to the app', () => {
  it.each([
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type', 'AADSTS700051'],
    ['no scope', { scope: '' }, 'invalid_request', 'AADSTS900144'],
    [
      'an unknown PKCE method',
      { code_challenge: 'x'.repeat(43), code_challenge_method: 'S512' },
      'invalid_request',
      'AADSTS50149',
    ],
    [
      'a PKCE challenge too short',
      { code_challenge: 'short', code_challenge_method: 'plain' },
      'invalid_request',
      'AADSTS501491',
    ],
    [
      'prompt=none (no session)',
      { prompt: 'none', login_hint: 'ada@contoso.example' },
      'login_required',
      'AADSTS50058',
    ],
  ])('%s', async (_what, params, error, code) => {
    const res = await fetch(ms.authorizeUrl(app, { scope: SCOPE, state: 'back', ...params }), {
      redirect: 'manual',
    });
    const back = await followAnswer(res, new URL(ms.url));
    expect(back.redirectUri).toBe(REDIRECT_URI);
    expect(back.params.get('error')).toBe(error);
    expect(back.params.get('error_description')).toMatch(new RegExp(`^${code}: `));
    expect(back.params.get('state')).toBe('back');
  });
});
