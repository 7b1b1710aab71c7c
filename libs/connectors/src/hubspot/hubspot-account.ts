import { Client } from '@hubspot/api-client';
import { err, ok } from '@syncline/core';
import type {
  AccountCredentials,
  ConnectorError,
  ConnectorResult,
  ProvenAccount,
  ProviderEndpoints,
} from '../contract/connector';
import { hubspotError } from './hubspot-session';

/**
 * Whose portal the credentials open, as HubSpot says. A private app's token: its account
 * details (`GET /account-info/v3/details`, through the SDK's generic request: the SDK has no
 * account-info API). OAuth tokens: the token-info routes (`oauth.accessTokensApi.get`,
 * `oauth.refreshTokensApi.get`), and every token given must name the same hub. An access
 * token whose `expiresAt` has passed is never sent again (its refresh token replaces it
 * first), so then the refresh token alone speaks for the credentials.
 */
export async function identifyHubspotAccount(
  credentials: AccountCredentials,
  endpoints: ProviderEndpoints,
  now: Date = new Date(),
): Promise<ConnectorResult<ProvenAccount>> {
  const basePath = endpoints.hubspotBaseUrl;
  if (credentials.privateAppToken !== undefined) {
    const client = new Client({ accessToken: credentials.privateAppToken, basePath });
    const details = await ask('the private app token', async () => {
      const response = await client.apiRequest({ method: 'GET', path: '/account-info/v3/details' });
      // As the SDK's own calls throw: `code` and a parsed body, mapped like theirs.
      if (!response.ok) {
        const headers = Object.fromEntries(response.headers.entries());
        throw { code: response.status, body: await response.json().catch(() => ({})), headers };
      }
      return (await response.json()) as { portalId?: unknown };
    });
    if (!details.ok) return details;
    const { portalId } = details.value;
    if (typeof portalId !== 'number' && typeof portalId !== 'string')
      return err({ code: 'Validation', message: "HubSpot's account details named no portal" });
    return ok({ accountId: String(portalId), proof: 'hubspot_account_info' });
  }

  const client = new Client({ basePath });
  const hubs: { token: string; hub: string }[] = [];
  const { accessToken, refreshToken } = credentials;
  const expired = credentials.expiresAt !== undefined && Date.parse(credentials.expiresAt) <= now.getTime();
  if (accessToken !== undefined && !(expired && refreshToken !== undefined)) {
    const info = await ask('the access token', () => client.oauth.accessTokensApi.get(accessToken));
    if (!info.ok) return info;
    hubs.push({ token: 'access token', hub: String(info.value.hubId) });
  }
  if (refreshToken !== undefined) {
    const info = await ask('the refresh token', () => client.oauth.refreshTokensApi.get(refreshToken));
    if (!info.ok) return info;
    hubs.push({ token: 'refresh token', hub: String(info.value.hubId) });
  }
  const [first, ...others] = hubs;
  if (first === undefined) return err({ code: 'Validation', message: 'no HubSpot token to identify' });
  const other = others.find((h) => h.hub !== first.hub);
  if (other) {
    return err({
      code: 'Validation',
      message: `the ${first.token} belongs to portal ${first.hub} and the ${other.token} to portal ${other.hub}`,
    });
  }
  return ok({ accountId: first.hub, proof: 'hubspot_token_info' });
}

/**
 * One identifying call. The token-info routes answer an unknown, expired or revoked token with
 * a 404 (a 400 for one they cannot read), the data plane with a 401: all refusals of the token.
 */
async function ask<T>(what: string, call: () => Promise<T>): Promise<ConnectorResult<T>> {
  try {
    return ok(await call());
  } catch (thrown) {
    const error = hubspotError(thrown);
    const refused = error.status === 400 || error.status === 401 || error.status === 404;
    if (refused) return err(refusal(error, `HubSpot refused ${what} (${error.status}): ${error.message}`));
    if (error.status === 403)
      return err({ ...error, code: 'Validation', message: `${what} may not read its account (403)` });
    return err(error);
  }
}

const refusal = (error: ConnectorError, message: string): ConnectorError => ({
  ...error,
  code: 'AuthRevoked',
  message,
});
