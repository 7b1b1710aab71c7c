import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { FaultKind } from '../common/faults';
import { signGoogleIdToken } from './google-id-token';
import type { GoogleUser } from './user.store';

/**
 * The emulator as an OpenID Connect provider: its issuer, discovery document and the id
 * tokens of a sign-in. Google's issuer is https://accounts.google.com, which the emulator
 * cannot be reached at, so a sign-in names the emulator's own origin instead.
 */

/** The emulator's origin as the caller reached it: what a client discovered and expects as `iss`. */
export const issuerOf = (req: FastifyRequest): string => `${req.protocol}://${req.host}`;

const SIGN_IN_SCOPES = new Set(['openid', 'email', 'profile']);

/**
 * A sign-in asks who the user is and nothing more (`openid`, with `email` and `profile`).
 * A data connect (openid with Calendar, Gmail, ...) keeps what google-auth-library expects:
 * the code straight after the account is chosen, and Google's own issuer in its id token.
 */
export function isSignIn(scope: string): boolean {
  const scopes = scope.split(' ').filter((s) => s !== '');
  return scopes.includes('openid') && scopes.every((s) => SIGN_IN_SCOPES.has(s));
}

/** OpenID Connect Discovery 1.0 §3, for an issuer. */
export function discoveryDocument(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/o/oauth2/v2/auth`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/oauth2/v3/userinfo`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/oauth2/v3/certs`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'email', 'profile'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    claims_supported: [
      'aud',
      'azp',
      'at_hash',
      'email',
      'email_verified',
      'exp',
      'family_name',
      'given_name',
      'hd',
      'iat',
      'iss',
      'name',
      'nonce',
      'sub',
    ],
    code_challenge_methods_supported: ['S256', 'plain'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
  };
}

/** The id-token faults: each makes the token wrong in one way a relying party must catch. */
export const ID_TOKEN_FLAWS = [
  'id-token-aud',
  'id-token-iss',
  'id-token-nonce',
  'id-token-signature',
  'id-token-expired',
] as const satisfies readonly FaultKind[];
export type IdTokenFlaw = (typeof ID_TOKEN_FLAWS)[number];

/** Addresses of Google's consumer accounts, which carry no hosted domain (`hd`). */
const CONSUMER_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

export interface IdTokenRequest {
  issuer: string;
  clientId: string;
  user: GoogleUser;
  scope: string;
  accessToken: string;
  nonce?: string;
  /** Seconds since the epoch: whoever verifies the token checks it against their own clock. */
  nowSeconds: number;
  lifetimeSeconds: number;
  flaw?: IdTokenFlaw;
}

/** The id token of a code exchange (OIDC Core §2, §3.1.3.6), with the flaw a fault asked for. */
export function signIdToken(request: IdTokenRequest): string {
  const { user, scope, nowSeconds, flaw } = request;
  const scopes = new Set(scope.split(' '));
  const domain = user.email.split('@')[1] ?? '';
  const [givenName, ...familyNames] = user.name.split(' ');
  const iat = flaw === 'id-token-expired' ? nowSeconds - 2 * request.lifetimeSeconds : nowSeconds;
  const nonce = flaw === 'id-token-nonce' ? `${request.nonce ?? ''}-not-the-one-sent` : request.nonce;
  const claims = {
    iss: flaw === 'id-token-iss' ? 'https://accounts.example.invalid' : request.issuer,
    azp: request.clientId,
    aud:
      flaw === 'id-token-aud' ? '000000000000-another-client.apps.googleusercontent.com' : request.clientId,
    sub: user.sub,
    ...(CONSUMER_DOMAINS.has(domain) ? {} : { hd: domain }),
    email: user.email,
    email_verified: user.emailVerified,
    ...(scopes.has('profile')
      ? {
          name: user.name,
          ...(givenName ? { given_name: givenName } : {}),
          ...(familyNames.length > 0 ? { family_name: familyNames.join(' ') } : {}),
        }
      : {}),
    ...(nonce === undefined ? {} : { nonce }),
    at_hash: accessTokenHash(request.accessToken),
    iat,
    exp: iat + request.lifetimeSeconds,
  };
  return signGoogleIdToken(claims, { signedByAnotherKey: flaw === 'id-token-signature' });
}

/** OIDC Core §3.1.3.6: the left half of the SHA-256 of the access token, base64url. */
export function accessTokenHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
