import { err, ok } from '@syncline/core';
import { oauth2 } from 'googleapis/build/src/apis/oauth2';
import type {
  AccountCredentials,
  ConnectorResult,
  ProvenAccount,
  ProviderEndpoints,
} from '../contract/connector';
import { mapGoogleError, toGoogleFailure } from './google-error.mapper';

/**
 * Whose Google account the access token opens: googleapis' oauth2 v2 `userinfo.get`, which
 * names the address only to a token granted the email scope (as the OAuth connect asks). The
 * refresh token cannot be asked about without minting a token with the client secret; it is
 * Google's own grant of the same consent, and nothing of it is checked here.
 */
export async function identifyGoogleAccount(
  credentials: AccountCredentials,
  endpoints: ProviderEndpoints,
): Promise<ConnectorResult<ProvenAccount>> {
  if (credentials.accessToken === undefined || credentials.privateAppToken !== undefined)
    return err({ code: 'Validation', message: 'Google credentials need an access token' });
  const rootUrl = endpoints.googleRootUrl.endsWith('/')
    ? endpoints.googleRootUrl
    : `${endpoints.googleRootUrl}/`;
  let email: string | null | undefined;
  let verified: boolean | null | undefined;
  try {
    const { data } = await oauth2({ version: 'v2', rootUrl }).userinfo.get(
      {},
      { headers: { Authorization: `Bearer ${credentials.accessToken}` }, retry: false, timeout: 15_000 },
    );
    email = data.email;
    verified = data.verified_email;
  } catch (error) {
    const failure = toGoogleFailure(error);
    if (!failure) throw error;
    const mapped = mapGoogleError(failure);
    return err(
      mapped.code === 'AuthRevoked'
        ? { ...mapped, message: `Google refused the access token (${failure.status}): ${mapped.message}` }
        : mapped,
    );
  }
  if (!email) {
    return err({
      code: 'Validation',
      message:
        "Google's userinfo named no address: the token was not granted the email scope " +
        '(https://www.googleapis.com/auth/userinfo.email)',
    });
  }
  if (verified === false) return err({ code: 'Validation', message: `Google has not verified ${email}` });
  return ok({ accountId: email.toLowerCase(), proof: 'google_userinfo', address: email.toLowerCase() });
}
