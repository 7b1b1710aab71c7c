import { Client } from '@hubspot/api-client';
import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type ProviderKey, providerEndpoints, type Result } from '@syncline/core';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import {
  httpFailure,
  type OAuthAccount,
  type OAuthFailure,
  type OAuthProviderClient,
  oauthRedirectUri,
} from './oauth-provider.client';

/**
 * HubSpot's authorization-code flow through @hubspot/api-client pointed at
 * HUBSPOT_API_BASE_URL (as the connector's sessions are): the token endpoint, then the
 * access-token info that names the portal the user installed the app in.
 */
@Injectable()
export class HubspotOAuthClient implements OAuthProviderClient {
  readonly provider = 'hubspot' as const;
  private readonly client: Client;
  private readonly redirectUri: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.client = new Client({ basePath: providerEndpoints(config).hubspotBaseUrl });
    this.redirectUri = oauthRedirectUri(config, this.provider);
  }

  missingSettings(): string[] {
    const { HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET } = this.config;
    return Object.entries({ HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET })
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
  }

  // The SDK's getAuthorizationUrl is fixed to app.hubspot.com; the same parameters, on the configured page.
  // HubSpot's OAuth takes no PKCE: the challenge (and, at the exchange, the verifier) is left out.
  authorizeUrl(state: string, _products: readonly ProviderKey[]): string {
    const url = new URL(this.config.HUBSPOT_OAUTH_AUTHORIZE_URL);
    url.searchParams.set('client_id', this.config.HUBSPOT_CLIENT_ID ?? '');
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('scope', this.config.HUBSPOT_OAUTH_SCOPES);
    url.searchParams.set('state', state);
    return url.toString();
  }

  async exchange(code: string): Promise<Result<OAuthAccount, OAuthFailure>> {
    const now = Date.now();
    let tokens: Awaited<ReturnType<Client['oauth']['tokensApi']['create']>>;
    try {
      tokens = await this.client.oauth.tokensApi.create(
        'authorization_code',
        code,
        this.redirectUri,
        this.config.HUBSPOT_CLIENT_ID,
        this.config.HUBSPOT_CLIENT_SECRET,
      );
    } catch (error) {
      return err(sdkFailure(error, 'the HubSpot code exchange'));
    }
    let info: Awaited<ReturnType<Client['oauth']['accessTokensApi']['get']>>;
    try {
      info = await this.client.oauth.accessTokensApi.get(tokens.accessToken);
    } catch (error) {
      return err(sdkFailure(error, 'the HubSpot access-token lookup'));
    }
    return ok({
      externalAccountId: String(info.hubId),
      address: null,
      displayName: info.hubDomain ?? null,
      credentials: {
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        expiresAt: new Date(now + tokens.expiresIn * 1000).toISOString(),
      },
    });
  }
}

/** An SDK ApiException carries the HTTP status in `code` and HubSpot's error in `body.status`. */
function sdkFailure(thrown: unknown, what: string): OAuthFailure {
  const error = (thrown ?? {}) as { code?: unknown; body?: unknown };
  const status = typeof error.code === 'number' ? error.code : undefined;
  const body =
    typeof error.body === 'object' && error.body !== null ? (error.body as { status?: unknown }) : {};
  return httpFailure(status, typeof body.status === 'string' ? body.status : undefined, what);
}
