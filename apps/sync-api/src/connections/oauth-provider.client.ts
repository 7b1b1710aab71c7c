import type { StoredCredentials } from '@syncline/connectors';
import type { ProviderKey, Result } from '@syncline/core';
import { type AppConfig, oauthCallbackBaseUrl } from '../config/app-config';
import type { OAuthProvider } from './oauth.schemas';

/** The account a consent was given for, and its tokens (to be sealed, never shown). */
export interface OAuthAccount {
  /** HubSpot: the portal (hub) id; Google: the user's email; Microsoft: `<tid>:<oid>` of the id token. */
  externalAccountId: string;
  displayName: string | null;
  /** The address of the person who consented (Google, Microsoft), lower case; null for a CRM portal. */
  address: string | null;
  credentials: StoredCredentials & { accessToken: string; refreshToken: string; expiresAt: string };
}

/**
 * Why a code exchange did not give an account: `refused` the provider said no (a bad or used
 * code, a wrong client); `consent_incomplete` the user left out access a product needs;
 * `unavailable` the provider could not be reached or failed (worth retrying the connect).
 */
export interface OAuthFailure {
  code: 'refused' | 'consent_incomplete' | 'unavailable';
  message: string;
}

/** One OAuth provider's half of the connect flow, through its official SDK. */
export interface OAuthProviderClient {
  readonly provider: OAuthProvider;
  /** The settings that must be set before the flow can run; empty when it can. */
  missingSettings(): string[];
  /**
   * The consent page for these products, carrying `state` back to the callback and, where the
   * provider takes PKCE (Google, Microsoft), the S256 `codeChallenge`.
   */
  authorizeUrl(state: string, products: readonly ProviderKey[], codeChallenge: string): string;
  /** Redeems the code (with the PKCE verifier held with the state) and identifies the account. */
  exchange(
    code: string,
    products: readonly ProviderKey[],
    codeVerifier: string,
  ): Promise<Result<OAuthAccount, OAuthFailure>>;
}

/** The redirect URI registered with the provider: the same at authorize and at the code exchange. */
export const oauthRedirectUri = (config: AppConfig, provider: OAuthProvider): string =>
  `${oauthCallbackBaseUrl(config)}/api/v1/connections/oauth/${provider}/callback`;

/**
 * An HTTP answer from a provider: a 4xx (but 429) is a refusal of what we sent; no answer,
 * 429 and 5xx mean the provider is unavailable right now.
 */
export function httpFailure(
  status: number | undefined,
  providerCode: string | undefined,
  what: string,
): OAuthFailure {
  const detail = [status, providerCode].filter((part) => part !== undefined && part !== '').join(' ');
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    return { code: 'refused', message: `${what} was refused (${detail})` };
  }
  return { code: 'unavailable', message: `${what} failed${detail ? ` (${detail})` : ''}; try again` };
}
