import { createHash, createSign, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import type { MicrosoftUser } from '../user.store';
import { issuerOf, publishedIssuer, type Tenant, tenantName } from './tenants';

interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
}

// One RSA key per process, made on first use (generating it is the slow part); relying
// parties fetch it from the keys endpoint, so every emulator instance may share it.
let signingKey: SigningKey | undefined;

function key(): SigningKey {
  if (!signingKey) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    // Microsoft's kid is a base64url SHA-1 thumbprint; the emulator has no certificate, so of the key.
    const kid = createHash('sha1')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64url');
    signingKey = { privateKey, publicKey, kid };
  }
  return signingKey;
}

/** `/{tenant}/discovery/v2.0/keys`: the signing key as a JWK set, as Microsoft publishes it. */
export function keySet(origin: string, tenant: Tenant) {
  const { publicKey, kid } = key();
  const { n, e } = publicKey.export({ format: 'jwk' });
  return { keys: [{ kty: 'RSA', use: 'sig', kid, x5t: kid, n, e, issuer: publishedIssuer(origin, tenant) }] };
}

/** `sub`: pairwise, the same user seen by two apps gets two subjects. */
export const pairwiseSubject = (user: MicrosoftUser, clientId: string): string =>
  createHash('sha256').update(`${user.tenantId}|${user.id}|${clientId}`).digest('base64url');

const ID_TOKEN_LIFETIME_S = 3_600;

export interface IdTokenRequest {
  origin: string;
  clientId: string;
  user: MicrosoftUser;
  scopes: readonly string[];
  nonce?: string;
  /** Wall-clock seconds: whoever verifies the token checks it against their own clock. */
  nowSeconds: number;
}

/**
 * A v2.0 id token (id-token-claims-reference). `oid`, `name` and `preferred_username` need
 * the `profile` scope and `email` the `email` scope, as on the real platform: an app that
 * keys users on `oid` must ask for `profile`.
 */
export function signIdToken(request: IdTokenRequest): string {
  const { user, nowSeconds } = request;
  const scopes = new Set(request.scopes);
  const profile = scopes.has('profile');
  const claims = {
    aud: request.clientId,
    iss: issuerOf(request.origin, user.tenantId),
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + ID_TOKEN_LIFETIME_S,
    ...(scopes.has('email') ? { email: user.mail } : {}),
    ...(profile ? { name: user.displayName } : {}),
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    ...(profile ? { oid: user.id, preferred_username: user.userPrincipalName } : {}),
    sub: pairwiseSubject(user, request.clientId),
    tid: user.tenantId,
    uti: randomBytes(16).toString('base64url'),
    ver: '2.0',
  };
  const { privateKey, kid } = key();
  const segment = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signed = `${segment({ typ: 'JWT', alg: 'RS256', kid })}.${segment(claims)}`;
  const signature = createSign('RSA-SHA256').update(signed).sign(privateKey).toString('base64url');
  return `${signed}.${signature}`;
}

/** `/{tenant}/v2.0/.well-known/openid-configuration`, endpoints on the emulator's origin. */
export function discoveryDocument(origin: string, tenant: Tenant) {
  const base = `${origin}/${tenantName(tenant)}`;
  return {
    token_endpoint: `${base}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    jwks_uri: `${base}/discovery/v2.0/keys`,
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    response_types_supported: ['code'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    issuer: publishedIssuer(origin, tenant),
    request_uri_parameter_supported: false,
    userinfo_endpoint: `${origin}/oidc/userinfo`,
    authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'nbf',
      'nonce',
      'preferred_username',
      'name',
      'oid',
      'tid',
      'ver',
      'email',
    ],
  };
}
