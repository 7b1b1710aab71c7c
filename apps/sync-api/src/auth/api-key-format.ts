import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// sk_<prefix>_<secret>. The prefix is a public id (it finds the row); the secret is 32
// random bytes in base64url, and only its SHA-256 is stored. The prefix is hex so it can
// never contain the separator; the secret may, so parsing splits at the first one only.
const KEY_PATTERN = /^sk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const PREFIX_BYTES = 8;
const SECRET_BYTES = 32;

export interface ParsedApiKey {
  prefix: string;
  secret: string;
}

export interface NewApiKey extends ParsedApiKey {
  /** The full key, shown to its owner once. */
  key: string;
  secretHash: Buffer;
}

export function generateApiKey(): NewApiKey {
  const prefix = randomBytes(PREFIX_BYTES).toString('hex');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { prefix, secret, key: `sk_${prefix}_${secret}`, secretHash: hashApiKeySecret(secret) };
}

/** Null for anything that is not a well-formed key. */
export function parseApiKey(key: string): ParsedApiKey | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  return { prefix: match[1]!, secret: match[2]! };
}

/** Null unless the header is `Bearer <well-formed key>`. */
export function parseBearerApiKey(header: string | undefined): ParsedApiKey | null {
  if (!header) return null;
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  return match ? parseApiKey(match[1]!) : null;
}

export function hashApiKeySecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function verifyApiKeySecret(secret: string, storedHash: Uint8Array): boolean {
  const presented = hashApiKeySecret(secret);
  return storedHash.length === presented.length && timingSafeEqual(presented, storedHash);
}
