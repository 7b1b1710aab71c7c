import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** A refusal of the identity platform: the OAuth `error`, its AADSTS code and message. */
export interface Aadsts {
  status: number;
  error: string;
  code: number;
  message: string;
}

const refusal = (status: number, error: string, code: number, message: string): Aadsts => ({
  status,
  error,
  code,
  message,
});

/** The refusals the emulator answers with, worded as the identity platform words them. */
export const aadsts = {
  missingParameter: (name: string) =>
    refusal(
      400,
      'invalid_request',
      900144,
      `The request body must contain the following parameter: '${name}'.`,
    ),
  tenantNotFound: (tenant: string) =>
    refusal(
      400,
      'invalid_tenant',
      90002,
      `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
    ),
  appNotFound: (clientId: string, tenant: string) =>
    refusal(
      400,
      'unauthorized_client',
      700016,
      `Application with identifier '${clientId}' was not found in the directory '${tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
    ),
  noReplyAddress: () => refusal(400, 'invalid_request', 900971, 'No reply address provided.'),
  replyAddressNotRegistered: (uri: string, clientId: string) =>
    refusal(
      400,
      'invalid_request',
      50011,
      `The redirect URI '${uri}' specified in the request does not match the redirect URIs configured for the application '${clientId}'. Make sure the redirect URI sent in the request matches one added to your application in the Azure portal.`,
    ),
  unsupportedResponseType: (type: string) =>
    refusal(
      400,
      'unsupported_response_type',
      700051,
      `response_type '${type}' is not enabled for the application.`,
    ),
  unsupportedResponseMode: (mode: string) =>
    refusal(400, 'invalid_request', 70007, `The response_mode '${mode}' is not supported.`),
  invalidChallengeMethod: () =>
    refusal(400, 'invalid_request', 50149, 'Invalid Code_Challenge_method parameter.'),
  invalidChallengeSize: () =>
    refusal(400, 'invalid_request', 501491, 'Invalid size of Code_Challenge parameter.'),
  loginRequired: () =>
    refusal(400, 'login_required', 50058, 'A silent sign-in request was sent but no user is signed in.'),
  userNotInTenant: (upn: string, userTenant: string, tenant: string, clientId: string) =>
    refusal(
      400,
      'invalid_grant',
      50020,
      `User account '${upn}' from identity provider 'https://sts.windows.net/${userTenant}/' does not exist in tenant '${tenant}' and cannot access the application '${clientId}' in that tenant. The account needs to be added as an external user in the tenant first.`,
    ),
  wrongAccountType: (tenant: string) =>
    refusal(
      400,
      'invalid_grant',
      500208,
      `The domain is not a valid login domain for the account type: the '${tenant}' endpoint does not accept this account.`,
    ),
  userNotFound: (upn: string) =>
    refusal(
      400,
      'invalid_request',
      50034,
      `The user account ${upn} does not exist in the directory. To sign into this application, the account must be added to the directory.`,
    ),
  invalidUserInput: () => refusal(400, 'invalid_request', 90013, 'The input from the user is not valid.'),
  declined: () => refusal(400, 'access_denied', 65004, 'User declined to consent to access the app.'),
  unsupportedGrantType: (type: string) =>
    refusal(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${type}'.`),
  missingSecret: () =>
    refusal(
      401,
      'invalid_client',
      7000218,
      "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
    ),
  wrongSecret: (clientId: string) =>
    refusal(
      401,
      'invalid_client',
      7000215,
      `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
    ),
  malformedGrant: () =>
    refusal(400, 'invalid_grant', 9002313, 'Invalid request. Request is malformed or invalid.'),
  codeRedeemed: () =>
    refusal(
      400,
      'invalid_grant',
      54005,
      'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.',
    ),
  codeExpired: () =>
    refusal(
      400,
      'invalid_grant',
      70008,
      'The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.',
    ),
  codeForOtherTenant: () =>
    refusal(
      400,
      'invalid_grant',
      700005,
      'Provided Authorization Code is intended to use against other tenant, thus rejected.',
    ),
  replyAddressMismatch: (sent: string, original: string) =>
    refusal(
      400,
      'invalid_grant',
      50011,
      `The reply address '${sent}' does not match the reply address '${original}' provided when requesting Authorization code.`,
    ),
  codeVerifierMismatch: () =>
    refusal(
      400,
      'invalid_grant',
      501481,
      'The Code_Verifier does not match the code_challenge supplied in the authorization request.',
    ),
  grantRevoked: () =>
    refusal(
      400,
      'invalid_grant',
      50173,
      'The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed or reset their password.',
    ),
  grantExpired: (issuedOn: string) =>
    refusal(
      400,
      'invalid_grant',
      700082,
      `The refresh token has expired due to inactivity. The token was issued on ${issuedOn} and was inactive for 90.00:00:00.`,
    ),
  noConsent: (clientId: string, appName: string) =>
    refusal(
      400,
      'invalid_grant',
      65001,
      `The user or administrator has not consented to use the application with ID '${clientId}' named '${appName}'. Send an interactive authorization request for this user and resource.`,
    ),
};

/** The identity platform's `2016-01-09 02:02:12Z`. */
export const stsTimestamp = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');

/** Ids a refusal carries so a support engineer could find it; the client's own id is echoed. */
export interface RefusalIds {
  traceId: string;
  correlationId: string;
  timestamp: string;
}

export const refusalIds = (nowMs: number, clientRequestId?: string): RefusalIds => ({
  traceId: randomUUID(),
  correlationId: clientRequestId ?? randomUUID(),
  timestamp: stsTimestamp(nowMs),
});

/** The id a client (MSAL) sends to correlate its request with the platform's logs. */
export const clientRequestId = (req: FastifyRequest): string | undefined => {
  const id = req.headers['client-request-id'];
  return typeof id === 'string' ? id : undefined;
};

/** The token endpoint's error body (reference-error-codes: "a sample error response"). */
export function tokenErrorBody(refused: Aadsts, ids: RefusalIds) {
  return {
    error: refused.error,
    error_description: `AADSTS${refused.code}: ${refused.message}\r\nTrace ID: ${ids.traceId}\r\nCorrelation ID: ${ids.correlationId}\r\nTimestamp: ${ids.timestamp}`,
    error_codes: [refused.code],
    timestamp: ids.timestamp,
    trace_id: ids.traceId,
    correlation_id: ids.correlationId,
    error_uri: `https://login.microsoftonline.com/error?code=${refused.code}`,
  };
}
