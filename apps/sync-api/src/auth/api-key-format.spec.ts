import { describe, expect, it } from 'vitest';
import {
  generateApiKey,
  hashApiKeySecret,
  parseApiKey,
  parseBearerApiKey,
  verifyApiKeySecret,
} from './api-key-format';

describe('api key format', () => {
  it('generates keys that parse back to their prefix and secret', () => {
    for (let i = 0; i < 200; i++) {
      const generated = generateApiKey();
      expect(generated.key).toMatch(/^sk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(parseApiKey(generated.key)).toEqual({ prefix: generated.prefix, secret: generated.secret });
      expect(Buffer.from(generated.secret, 'base64url')).toHaveLength(32);
    }
  });

  it('keeps a secret that itself contains the separator intact', () => {
    const secret = `${'a'.repeat(20)}_${'b'.repeat(22)}`;
    expect(parseApiKey(`sk_0123456789abcdef_${secret}`)).toEqual({ prefix: '0123456789abcdef', secret });
  });

  it('gives a different key every time', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.prefix).not.toBe(b.prefix);
    expect(a.secret).not.toBe(b.secret);
  });

  it.each([
    '',
    'sk_',
    'sk_0123456789abcdef',
    `pk_0123456789abcdef_${'a'.repeat(43)}`,
    `sk_0123456789ABCDEF_${'a'.repeat(43)}`,
    `sk_0123456789abcde_${'a'.repeat(43)}`,
    `sk_0123456789abcdef_${'a'.repeat(42)}`,
    `sk_0123456789abcdef_${'a'.repeat(44)}`,
    `sk_0123456789abcdef_${'a'.repeat(42)}=`,
    ` sk_0123456789abcdef_${'a'.repeat(43)}`,
  ])('rejects the malformed key %j', (key) => {
    expect(parseApiKey(key)).toBeNull();
  });

  it('reads a key from a Bearer header only', () => {
    const { key, prefix, secret } = generateApiKey();
    expect(parseBearerApiKey(`Bearer ${key}`)).toEqual({ prefix, secret });
    expect(parseBearerApiKey(`bearer ${key}`)).toEqual({ prefix, secret });
    expect(parseBearerApiKey(undefined)).toBeNull();
    expect(parseBearerApiKey(key)).toBeNull();
    expect(parseBearerApiKey(`Basic ${key}`)).toBeNull();
    expect(parseBearerApiKey(`Bearer ${key} extra`)).toBeNull();
  });

  it('stores only the SHA-256 of the secret', () => {
    const { key, secret, secretHash } = generateApiKey();
    expect(secretHash).toHaveLength(32);
    expect(secretHash.equals(hashApiKeySecret(secret))).toBe(true);
    expect(secretHash.toString('utf8')).not.toContain(secret);
    expect(secretHash.toString('base64url')).not.toBe(secret);
    expect(key).toContain(secret);
  });

  it('verifies the right secret and nothing else', () => {
    const { secret, secretHash } = generateApiKey();
    const other = generateApiKey();
    expect(verifyApiKeySecret(secret, secretHash)).toBe(true);
    expect(verifyApiKeySecret(other.secret, secretHash)).toBe(false);
    expect(verifyApiKeySecret(`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`, secretHash)).toBe(
      false,
    );
    expect(verifyApiKeySecret(secret, secretHash.subarray(0, 31))).toBe(false);
    expect(verifyApiKeySecret(secret, new Uint8Array(0))).toBe(false);
  });
});
