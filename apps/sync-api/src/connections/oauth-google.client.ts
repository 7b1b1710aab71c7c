import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type ProviderKey, providerEndpoints, type Result } from '@syncline/core';
import { Auth } from 'googleapis';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { GoogleProduct } from './oauth.schemas';
import {
  httpFailure,
  type OAuthAccount,
  type OAuthFailure,
  type OAuthProviderClient,
  oauthRedirectUri,
} from './oauth-provider.client';

/** The access each Google connection needs (what its connector calls). */
export const GOOGLE_PRODUCT_SCOPES: Record<GoogleProduct, string> = {
  'google-calendar': 'https://www.googleapis.com/auth/calendar',
  gmail: 'https://www.googleapis.com/auth/gmail.readonly',
  'google-tasks': 'https://www.googleapis.com/auth/tasks',
};
/** An id token with the user's email: the account the connections belong to. */
const IDENTITY_SCOPES = ['openid', 'email'];

const isGoogleProduct = (product: ProviderKey): product is GoogleProduct => product in GOOGLE_PRODUCT_SCOPES;

/**
 * Google's authorization-code flow with PKCE (S256) through google-auth-library's OAuth2Client
 * (as re-exported by googleapis), its endpoints set from GOOGLE_OAUTH_AUTHORIZE_URL, GOOGLE_TOKEN_URL and
 * GOOGLE_API_ROOT_URL (the id-token certificates), so the emulator stands in for Google.
 */
@Injectable()
export class GoogleOAuthClient implements OAuthProviderClient {
  readonly provider = 'google' as const;
  /** One client for the process: it caches the certificates id tokens are verified with. */
  private readonly client: Auth.OAuth2Client;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const { googleRootUrl, googleTokenUrl } = providerEndpoints(config);
    this.client = new Auth.OAuth2Client({
      clientId: config.GOOGLE_CLIENT_ID,
      clientSecret: config.GOOGLE_CLIENT_SECRET,
      redirectUri: oauthRedirectUri(config, this.provider),
      endpoints: {
        oauth2AuthBaseUrl: config.GOOGLE_OAUTH_AUTHORIZE_URL,
        oauth2TokenUrl: googleTokenUrl,
        oauth2FederatedSignonPemCertsUrl: `${googleRootUrl}oauth2/v1/certs`,
        oauth2FederatedSignonJwkCertsUrl: `${googleRootUrl}oauth2/v3/certs`,
      },
      transporterOptions: { timeout: 15_000 },
    });
  }

  missingSettings(): string[] {
    const { GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET } = this.config;
    return Object.entries({ GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET })
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
  }

  authorizeUrl(state: string, products: readonly ProviderKey[], codeChallenge: string): string {
    return this.client.generateAuthUrl({
      // A refresh token, every time: `prompt=consent` makes Google issue one on a repeated consent too.
      access_type: 'offline',
      prompt: 'consent',
      include_granted_scopes: true,
      scope: [...IDENTITY_SCOPES, ...products.filter(isGoogleProduct).map((p) => GOOGLE_PRODUCT_SCOPES[p])],
      state,
      code_challenge: codeChallenge,
      code_challenge_method: Auth.CodeChallengeMethod.S256,
    });
  }

  async exchange(
    code: string,
    products: readonly ProviderKey[],
    codeVerifier: string,
  ): Promise<Result<OAuthAccount, OAuthFailure>> {
    let tokens: Auth.Credentials;
    try {
      ({ tokens } = await this.client.getToken({ code, codeVerifier }));
    } catch (error) {
      return err(gaxiosFailure(error, 'the Google code exchange'));
    }
    const { access_token: accessToken, refresh_token: refreshToken, id_token: idToken } = tokens;
    if (!accessToken || !refreshToken || !idToken) {
      return err({
        code: 'refused',
        message: 'Google answered the code exchange without an access, refresh or id token',
      });
    }
    // Google's granular consent lets the user untick a product's access: each connection needs its own.
    const granted = new Set((tokens.scope ?? '').split(/\s+/));
    const missing = products.filter(isGoogleProduct).filter((p) => !granted.has(GOOGLE_PRODUCT_SCOPES[p]));
    if (missing.length > 0) {
      return err({
        code: 'consent_incomplete',
        message: `the consent did not grant the access ${missing.join(', ')} needs; connect again and allow it`,
      });
    }
    const email = await this.verifiedEmail(idToken);
    if (!email.ok) return email;
    return ok({
      externalAccountId: email.value,
      address: email.value.toLowerCase(),
      displayName: null,
      credentials: {
        accessToken,
        refreshToken,
        expiresAt: new Date(tokens.expiry_date ?? Date.now() + 3_600_000).toISOString(),
      },
    });
  }

  /** The id token came straight from the token endpoint, but is still checked: signature, audience, issuer, expiry. */
  private async verifiedEmail(idToken: string): Promise<Result<string, OAuthFailure>> {
    let payload: Auth.TokenPayload | undefined;
    try {
      const ticket = await this.client.verifyIdToken({
        idToken,
        audience: this.config.GOOGLE_CLIENT_ID ?? '',
      });
      payload = ticket.getPayload();
    } catch (error) {
      if (isHttpError(error)) return err(gaxiosFailure(error, 'fetching the Google id-token certificates'));
      return err({
        code: 'refused',
        message: `Google's id token did not verify: ${(error as Error).message}`,
      });
    }
    if (!payload?.email || payload.email_verified === false) {
      return err({ code: 'refused', message: "Google's id token names no verified email" });
    }
    return ok(payload.email.toLowerCase());
  }
}

interface GaxiosLike {
  response?: { status?: number; data?: unknown };
}

/** Gaxios errors (what google-auth-library throws for HTTP and network failures) carry `response` or a `config`. */
const isHttpError = (error: unknown): error is GaxiosLike =>
  typeof error === 'object' && error !== null && ('response' in error || 'config' in error);

function gaxiosFailure(thrown: unknown, what: string): OAuthFailure {
  const response = isHttpError(thrown) ? thrown.response : undefined;
  const data = response?.data;
  const providerCode =
    typeof data === 'object' && data !== null && typeof (data as { error?: unknown }).error === 'string'
      ? (data as { error: string }).error
      : undefined;
  return httpFailure(response?.status, providerCode, what);
}
