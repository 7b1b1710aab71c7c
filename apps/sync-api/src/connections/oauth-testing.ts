import { createHash } from 'node:crypto';
import { emulatorControl, type RunningEmulators, startEmulators } from '@syncline/emulators';
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { TestApp } from '../testing/test-app';
import { oauthStateKey } from './oauth-state.repository';

/** The public base the test apps claim to be reached at: the redirect URIs start with it. */
export const CALLBACK_BASE = 'https://sync.example.test';
export const HUBSPOT_APP = {
  appId: 7301,
  clientId: 'hubspot-oauth-spec-client',
  clientSecret: 'hubspot-spec-secret',
};

export interface OAuthEmulators {
  emulators: RunningEmulators;
  google: { clientId: string; clientSecret: string };
  /** Our app's registration with the Microsoft identity platform, and its users. */
  microsoft: MicrosoftDirectory;
  /** Settings pointing a test app's OAuth flow (and SDKs) at these emulators. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** The emulators on free ports, and the settings of an app registered with them. */
export async function startOAuthEmulators(): Promise<OAuthEmulators> {
  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  const res = await fetch(`${emulators.googleUrl}/_emulator/google/oauth-client`);
  const google = (await res.json()) as { clientId: string; clientSecret: string };
  const microsoft = await MicrosoftDirectory.register(emulators.microsoftUrl, [
    `${CALLBACK_BASE}/api/v1/connections/oauth/microsoft/callback`,
  ]);
  return {
    emulators,
    google,
    microsoft,
    env: {
      ...microsoft.env,
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      HUBSPOT_OAUTH_AUTHORIZE_URL: `${emulators.hubspotUrl}/oauth/authorize`,
      HUBSPOT_CLIENT_ID: HUBSPOT_APP.clientId,
      HUBSPOT_CLIENT_SECRET: HUBSPOT_APP.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
      GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
      GOOGLE_OAUTH_AUTHORIZE_URL: `${emulators.googleUrl}/o/oauth2/v2/auth`,
      GOOGLE_CLIENT_ID: google.clientId,
      GOOGLE_CLIENT_SECRET: google.clientSecret,
      OAUTH_CALLBACK_BASE_URL: CALLBACK_BASE,
    },
    close: () => emulators.close(),
  };
}

/** A HubSpot portal with our app installed (the same app, so the same client id, in every portal). */
export async function createPortal(emulators: RunningEmulators, portalId: number): Promise<void> {
  const res = await fetch(`${emulators.hubspotUrl}/_emulator/hubspot/portals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ portalId, ...HUBSPOT_APP }),
  });
  expect(res.status).toBeLessThan(300);
}

/**
 * The account owner at the emulator's consent page, approving: HubSpot asks which portal to
 * install into (`portalId`), Google shows an account chooser first and takes the account
 * picked (`login_hint`, as its form sends it). Answers where the browser is redirected to.
 */
export async function approveConsent(
  authorizeUrl: string,
  choice: { portalId: number } | { email: string },
): Promise<URL> {
  const url = new URL(authorizeUrl);
  if ('email' in choice) {
    const chooser = await fetch(url, { redirect: 'manual' });
    expect(chooser.status).toBe(200);
    expect(await chooser.text()).toContain('Choose an account');
    url.searchParams.set('login_hint', choice.email);
  } else {
    url.searchParams.set('portalId', String(choice.portalId));
  }
  const redirect = await fetch(url, { redirect: 'manual' });
  expect(redirect.status).toBe(302);
  return new URL(redirect.headers.get('location') ?? '');
}

/** The S256 challenge of a PKCE verifier: BASE64URL(SHA-256(verifier)) (RFC 7636 §4.2). */
export const s256 = (verifier: string): string =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');

/**
 * What a connect's state holds in Redis: the raw value, and its PKCE verifier opened as the
 * API opens it (what the browser never sees). Null once the state is taken.
 */
export async function storedState(
  redis: Redis,
  t: Pick<TestApp, 'config' | 'keyring'>,
  state: string,
): Promise<{ raw: string; codeVerifier: string } | null> {
  const key = oauthStateKey(state);
  const raw = await redis.get(`${t.config.REDIS_PREFIX}:${key}`);
  if (raw === null) return null;
  const { codeVerifier } = JSON.parse(raw) as { codeVerifier: { keyId: string; ciphertext: string } };
  const opened = t.keyring.open(
    { keyId: codeVerifier.keyId, ciphertext: Buffer.from(codeVerifier.ciphertext, 'base64') },
    key,
  );
  return { raw, codeVerifier: opened };
}

/** The path and query the browser would request of the API, for `app.inject`. */
export const callbackPath = (redirect: URL): string => `${redirect.pathname}${redirect.search}`;

/** Where the provider sends the browser when the user clicks "deny". */
export const deniedCallbackPath = (provider: 'hubspot' | 'google' | 'microsoft', state: string): string =>
  `/api/v1/connections/oauth/${provider}/callback?${new URLSearchParams({
    error: 'access_denied',
    error_description: 'The user denied the request',
    state,
  })}`;

/** A user of the Microsoft emulator: `id` is the object id (`oid`), `tenantId` the `tid`. */
export interface MicrosoftTestUser {
  id: string;
  tenantId: string;
  userPrincipalName: string;
}

/** Tokens the Microsoft emulator issued without the consent pages (a grant made by a test). */
export interface MicrosoftGrant {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/** What a Microsoft connection needs to read everything of its product. */
export const MICROSOFT_TEST_SCOPES = [
  'openid',
  'profile',
  'email',
  'offline_access',
  'User.Read',
  'Calendars.ReadWrite',
  'Mail.Read',
  'Tasks.ReadWrite',
];

/**
 * Our app as registered with the Microsoft emulator (a client id and secret, the redirect
 * URIs), and its users: made, granted tokens directly, or sent through the consent pages.
 */
export class MicrosoftDirectory {
  private constructor(
    readonly url: string,
    readonly app: { clientId: string; clientSecret: string },
  ) {}

  static async register(url: string, redirectUris: string[] = []): Promise<MicrosoftDirectory> {
    const app = await emulatorControl(url)<{ clientId: string; clientSecret: string }>(
      'POST',
      '/_emulator/microsoft/apps',
      { redirectUris, displayName: 'Syncline' },
    );
    return new MicrosoftDirectory(url, { clientId: app.clientId, clientSecret: app.clientSecret });
  }

  /** Settings pointing an app's Microsoft OAuth client and Graph calls at this emulator, as this app. */
  get env(): NodeJS.ProcessEnv {
    return {
      MICROSOFT_GRAPH_URL: this.url,
      MICROSOFT_LOGIN_URL: this.url,
      MICROSOFT_CLIENT_ID: this.app.clientId,
      MICROSOFT_CLIENT_SECRET: this.app.clientSecret,
    };
  }

  /** A mailbox (a new tenant of its own unless `tenantId` is given). */
  addUser(userPrincipalName: string, tenantId?: string): Promise<MicrosoftTestUser> {
    return emulatorControl(this.url)<MicrosoftTestUser>('POST', '/_emulator/microsoft/users', {
      userPrincipalName,
      ...(tenantId === undefined ? {} : { tenantId }),
    });
  }

  /** Tokens of the user for this app, as a consent to `scopes` would give. */
  grant(
    userPrincipalName: string,
    scopes: readonly string[] = MICROSOFT_TEST_SCOPES,
  ): Promise<MicrosoftGrant> {
    return emulatorControl(this.url)<MicrosoftGrant>(
      'POST',
      `/_emulator/microsoft/users/${encodeURIComponent(userPrincipalName)}/grants`,
      { clientId: this.app.clientId, scopes: [...scopes] },
    );
  }

  control<T>(method: string, path: string, body?: unknown): Promise<T> {
    return emulatorControl(this.url)<T>(method, path, body);
  }
}

/** The connection's account id of a Microsoft user: `<tid>:<oid>`, lower case. */
export const microsoftAccountOf = (user: MicrosoftTestUser): string =>
  `${user.tenantId}:${user.id}`.toLowerCase();

/**
 * The account owner at the Microsoft emulator's sign-in pages: the account picker (our
 * authorize URL asks for it), where they pick `upn`, then the consent page, where they press
 * Accept or Cancel. Answers where the browser is redirected to.
 */
export async function consentAtMicrosoft(
  authorizeUrl: string,
  choice: { upn: string; decision: 'accept' | 'cancel' },
): Promise<URL> {
  const url = new URL(authorizeUrl);
  const picker = await fetch(url, { redirect: 'manual' });
  expect(picker.status).toBe(200);
  expect(await picker.text()).toContain('Pick an account');
  // What the picker's link for that account carries: every parameter, the account as login_hint.
  url.searchParams.set('login_hint', choice.upn);
  url.searchParams.delete('prompt');
  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  expect(page.status, html).toBe(200);
  expect(html).toContain('Permissions requested');
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no consent form on the page: ${html}`);
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? '').matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields.set(unescapeHtml(input[1] ?? ''), unescapeHtml(input[2] ?? ''));
  fields.set('decision', choice.decision);
  const answer = await fetch(new URL(unescapeHtml(form[1] ?? ''), url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
    redirect: 'manual',
  });
  expect(answer.status, await answer.clone().text()).toBe(302);
  return new URL(answer.headers.get('location') ?? '');
}

const unescapeHtml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, entity: string) =>
    entity === 'amp' ? '&' : entity === 'lt' ? '<' : entity === 'gt' ? '>' : entity === 'quot' ? '"' : "'",
  );
