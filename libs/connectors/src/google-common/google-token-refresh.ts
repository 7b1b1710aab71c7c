import { err, ok } from '@syncline/core';
import type { ConnectorResult } from '../contract/connector';
import type { RefreshFn } from '../shared/token-source';
import { mapGoogleError } from './google-error.mapper';

export interface GoogleOAuthClientConfig {
  /** The token endpoint (`https://oauth2.googleapis.com/token`, or the emulator's `/token`). */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface RefreshedGoogleToken {
  accessToken: string;
  /** When the access token stops working, from `expires_in`. */
  expiresAt: Date;
  /** Google sends a new refresh token only when it rotates one. */
  refreshToken?: string;
  scope?: string;
}

/**
 * Google's refresh: `POST token_url` (form) with `grant_type=refresh_token`. A revoked or
 * unknown grant (`400 invalid_grant`) is AuthRevoked; a rejected client is AuthRevoked too
 * (nothing but a new connect fixes it); 429/5xx and network failures are retryable.
 */
export async function refreshGoogleAccessToken(
  config: GoogleOAuthClientConfig,
  refreshToken: string,
  now: () => number = Date.now,
): Promise<ConnectorResult<RefreshedGoogleToken>> {
  let res: Response;
  try {
    res = await fetch(config.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: config.clientId,
        client_secret: config.clientSecret,
      }).toString(),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return err({ code: 'Transient', message: `token refresh failed: ${(error as Error).message}` });
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok && typeof body.access_token === 'string') {
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    return ok({
      accessToken: body.access_token,
      expiresAt: new Date(now() + expiresIn * 1000),
      ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
      ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
    });
  }
  const reason = typeof body.error === 'string' ? body.error : undefined;
  if (reason === 'invalid_grant' || reason === 'invalid_client' || reason === 'unauthorized_client') {
    return err({ code: 'AuthRevoked', message: `token refresh refused: ${reason}`, status: res.status });
  }
  if (res.ok)
    return err({
      code: 'Transient',
      message: 'token refresh answered without an access token',
      status: res.status,
    });
  return err(
    mapGoogleError({
      status: res.status,
      message: `token refresh: ${reason ?? res.statusText}`,
      ...(reason ? { reason } : {}),
    }),
  );
}

/** The refresh function bound to one OAuth client, for `OAuthTokenSource`. */
export const googleTokenRefresher =
  (config: GoogleOAuthClientConfig, now: () => number = Date.now): RefreshFn =>
  (refreshToken) =>
    refreshGoogleAccessToken(config, refreshToken, now);
