import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  keyId: string;
  /** iv ‖ auth tag ‖ ciphertext */
  ciphertext: Buffer;
}

export class KeyringError extends Error {
  override name = 'KeyringError';
}

/**
 * AES-256-GCM under a set of named keys. New secrets are sealed with the active key; the
 * key id stored beside each ciphertext lets old ones open after a rotation. The associated
 * data binds a ciphertext to its row, so it cannot be copied onto another row.
 */
export class Keyring {
  private readonly keys: Map<string, Buffer>;

  constructor(
    keys: Record<string, Buffer>,
    private readonly activeKeyId: string,
  ) {
    this.keys = new Map(Object.entries(keys));
    for (const [id, key] of this.keys) {
      if (key.length !== 32) throw new KeyringError(`key ${id} must be 32 bytes, got ${key.length}`);
    }
    if (!this.keys.has(activeKeyId))
      throw new KeyringError(`active key ${activeKeyId} is not in the keyring`);
  }

  /** Parses `kid1:base64key,kid2:base64key` (the SYNCLINE_ENCRYPTION_KEYS setting). */
  static parse(spec: string, activeKeyId?: string): Keyring {
    const keys: Record<string, Buffer> = {};
    let first: string | undefined;
    for (const part of spec
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const at = part.indexOf(':');
      if (at <= 0) throw new KeyringError('each key must be written as <id>:<base64 of 32 bytes>');
      const id = part.slice(0, at);
      keys[id] = Buffer.from(part.slice(at + 1), 'base64');
      first ??= id;
    }
    if (!first) throw new KeyringError('no keys given');
    return new Keyring(keys, activeKeyId ?? first);
  }

  seal(plaintext: string, associatedData: string): Sealed {
    const key = this.keys.get(this.activeKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.activeKeyId, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]) };
  }

  open(sealed: Sealed, associatedData: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new KeyringError(`no key ${sealed.keyId} in the keyring`);
    const iv = sealed.ciphertext.subarray(0, IV_BYTES);
    const tag = sealed.ciphertext.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    const body = sealed.ciphertext.subarray(IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new KeyringError('ciphertext does not open under its key (tampered, or bound to another row)');
    }
  }

  /** Whether a sealed secret should be re-sealed under the active key. */
  needsRotation(sealed: Sealed): boolean {
    return sealed.keyId !== this.activeKeyId;
  }
}

export const keyringEnvSchema = z.object({
  SYNCLINE_ENCRYPTION_KEYS: z
    .string()
    .min(1)
    .refine((v) => {
      try {
        Keyring.parse(v);
        return true;
      } catch {
        return false;
      }
    }, 'must be <id>:<base64 of 32 bytes>[,<id>:<base64>…]'),
  SYNCLINE_ENCRYPTION_ACTIVE_KEY: z.string().min(1).optional(),
});
