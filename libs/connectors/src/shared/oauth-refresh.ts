import { err, ok } from '@syncline/core';
import type { ConnectorResult } from '../contract/connector';
import { connectorErrorFromHttp } from './http-errors';
import type { RefreshedToken, RefreshFn } from './token-source';

/**
 * Error codes with which HubSpot and Google refuse a refresh token itself, or the OAuth
 * client it belongs to (Google `invalid_client`, `unauthorized_client`): only a new connect
 * fixes either.
 */
const REFUSED_GRANT = new Set([
  'BAD_REFRESH_TOKEN',
  'EXPIRED_REFRESH_TOKEN',
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
]);

/**
 * The standard OAuth 2 refresh-token grant (form encoded), as both HubSpot
 * (`/oauth/v1/token`) and Google (`https://oauth2.googleapis.com/token`, the emulator's
 * `/token`) take it. A refused refresh token or client (HubSpot 400 `BAD_REFRESH_TOKEN`,
 * Google 400 `invalid_grant`, 401 `invalid_client`) is `AuthRevoked`; 429, 5xx, timeouts and
 * network failures are retryable. The one refresh function for every provider.
 */
export function oauth2Refresher(options: {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  now?: () => number;
  /** Gives up on a token endpoint that does not answer (Transient). */
  timeoutMs?: number;
}): RefreshFn {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 15_000;
  return async (refreshToken: string): Promise<ConnectorResult<RefreshedToken>> => {
    let response: Response;
    try {
      response = await fetch(options.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: options.clientId,
          client_secret: options.clientSecret,
          refresh_token: refreshToken,
        }).toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      return err({ code: 'Transient', message: `token refresh failed: ${(cause as Error).message}` });
    }
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Non-JSON answers are judged by status alone.
    }
    if (!response.ok) {
      const code = String(body.error ?? body.status ?? '');
      if ((response.status === 400 || response.status === 401) && REFUSED_GRANT.has(code))
        return err({
          code: 'AuthRevoked',
          message: `refresh token refused (${code})`,
          status: response.status,
        });
      return err(
        connectorErrorFromHttp({
          status: response.status,
          headers: Object.fromEntries(response.headers),
          message: `token refresh: ${response.status} ${code}`,
        }),
      );
    }
    const accessToken = body.access_token;
    const expiresIn = Number(body.expires_in);
    if (typeof accessToken !== 'string' || !Number.isFinite(expiresIn))
      return err({ code: 'Transient', message: 'token refresh answered without access_token/expires_in' });
    return ok({
      accessToken,
      ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
      expiresAt: new Date(now() + expiresIn * 1000),
    });
  };
}
