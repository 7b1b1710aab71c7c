import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring, KeyringError } from './keyring';

const k = () => randomBytes(32);

describe('Keyring', () => {
  it('opens what it sealed, bound to the row it was sealed for', () => {
    const ring = new Keyring({ a: k() }, 'a');
    const sealed = ring.seal('{"refreshToken":"r-1"}', 'connection:1');
    expect(sealed.ciphertext.toString('utf8')).not.toContain('r-1');
    expect(ring.open(sealed, 'connection:1')).toBe('{"refreshToken":"r-1"}');
    expect(() => ring.open(sealed, 'connection:2')).toThrow(KeyringError);
  });

  it('detects tampering', () => {
    const ring = new Keyring({ a: k() }, 'a');
    const sealed = ring.seal('secret', 'row');
    sealed.ciphertext[sealed.ciphertext.length - 1]! ^= 1;
    expect(() => ring.open(sealed, 'row')).toThrow(/does not open/);
  });

  it('opens secrets sealed under an older key after rotation and reports them for re-sealing', () => {
    const oldKey = k();
    const before = new Keyring({ v1: oldKey }, 'v1');
    const sealed = before.seal('secret', 'row');
    const after = new Keyring({ v1: oldKey, v2: k() }, 'v2');
    expect(after.open(sealed, 'row')).toBe('secret');
    expect(after.needsRotation(sealed)).toBe(true);
    expect(after.seal('x', 'row').keyId).toBe('v2');
  });

  it('parses the settings format and refuses short keys', () => {
    const spec = `v1:${k().toString('base64')},v2:${k().toString('base64')}`;
    expect(Keyring.parse(spec, 'v2').seal('x', 'r').keyId).toBe('v2');
    expect(Keyring.parse(spec).seal('x', 'r').keyId).toBe('v1');
    expect(() => Keyring.parse(`v1:${randomBytes(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => Keyring.parse('nonsense')).toThrow(KeyringError);
  });
});
