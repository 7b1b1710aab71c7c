import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { expect } from 'vitest';

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
  /** Settings pointing a test app's OAuth flow (and SDKs) at these emulators. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Both emulators on free ports, and the settings of an app registered with them. */
export async function startOAuthEmulators(): Promise<OAuthEmulators> {
  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  const res = await fetch(`${emulators.googleUrl}/_emulator/google/oauth-client`);
  const google = (await res.json()) as { clientId: string; clientSecret: string };
  return {
    emulators,
    google,
    env: {
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

/** The path and query the browser would request of the API, for `app.inject`. */
export const callbackPath = (redirect: URL): string => `${redirect.pathname}${redirect.search}`;

/** Where the provider sends the browser when the user clicks "deny". */
export const deniedCallbackPath = (provider: 'hubspot' | 'google', state: string): string =>
  `/api/v1/connections/oauth/${provider}/callback?${new URLSearchParams({
    error: 'access_denied',
    error_description: 'The user denied the request',
    state,
  })}`;
