import { createHash, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';

interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
}

// One RSA key per process, made on first use: generating it is the slow part, and every
// emulator instance may share it (receivers fetch it from /oauth2/v1/certs anyway).
let signingKey: SigningKey | undefined;
// A key the certs never publish, for the id-token-signature fault.
let rogueKey: SigningKey | undefined;

function generateKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = createHash('sha1')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
  return { privateKey, publicKey, kid };
}

function key(): SigningKey {
  signingKey ??= generateKey();
  return signingKey;
}

function anotherKey(): SigningKey {
  rogueKey ??= generateKey();
  return rogueKey;
}

export const GOOGLE_ISSUER = 'https://accounts.google.com';

/**
 * An RS256 JWT shaped like Google's OIDC tokens (Pub/Sub push auth, id_token), verifiable
 * with google-auth-library's `verifyIdToken` pointed at this emulator's certs. `iss` is
 * Google's unless the claims name another (a sign-in's token names the emulator's issuer).
 */
export function signGoogleIdToken(
  claims: Record<string, unknown>,
  options: { signedByAnotherKey?: boolean } = {},
): string {
  const { kid } = key();
  // The published key's id over another key's signature: a verifier finds the key and the signature fails.
  const { privateKey } = options.signedByAnotherKey ? anotherKey() : key();
  const segment = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signed = `${segment({ alg: 'RS256', kid, typ: 'JWT' })}.${segment({ iss: GOOGLE_ISSUER, ...claims })}`;
  const signature = createSign('RSA-SHA256').update(signed).sign(privateKey).toString('base64url');
  return `${signed}.${signature}`;
}

/** `/oauth2/v1/certs`: kid → PEM, the format google-auth-library fetches in Node. */
export function pemCerts(): Record<string, string> {
  const { publicKey, kid } = key();
  return { [kid]: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** `/oauth2/v3/certs`: the same key as a JWK set. */
export function jwkCerts(): { keys: Record<string, unknown>[] } {
  const { publicKey, kid } = key();
  return { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
}
