import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Keyring } from '@syncline/core';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { openText, sealedTextSchema, sealText } from '../../common/sealed-text';

/** What the callback needs to finish a sign-in the browser started. */
export interface OidcStateRecord {
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  /** SHA-256 (hex) of the random value in the starting browser's binding cookie. */
  browserHash: string;
}

const stateRecord = z.object({
  nonce: z.string().min(1),
  /** Sealed under the keyring, bound to this state's key (the associated data). */
  codeVerifier: sealedTextSchema,
  returnTo: z.string().min(1),
  browserHash: z.string().length(64),
});

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The Redis key of a state (under the app's prefix); a hash, so the key space hands out no usable state. */
export const oidcStateKey = (state: string): string => `oidc-state:${sha256Hex(state)}`;

/**
 * Sign-ins in flight, in Redis: each state expires on its own and can be taken once. The PKCE
 * verifier is sealed as the connect flows' are, so a read of Redis hands out no verifier.
 */
@Injectable()
export class OidcStateRepository {
  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(Keyring) private readonly keyring: Keyring,
  ) {}

  /** False if the state is already pending (a collision of random states: a bug). */
  async save(state: string, record: OidcStateRecord, ttlSeconds: number): Promise<boolean> {
    const key = oidcStateKey(state);
    const stored: z.input<typeof stateRecord> = {
      ...record,
      codeVerifier: sealText(this.keyring, record.codeVerifier, key),
    };
    const saved = await this.redis.set(key, JSON.stringify(stored), 'EX', ttlSeconds, 'NX');
    return saved === 'OK';
  }

  /**
   * The state's record, deleted in the same step; null when unknown, expired or already taken,
   * or when its verifier does not open (copied from another state's key, or sealed under a key
   * since removed from the keyring): that sign-in is started again.
   */
  async take(state: string): Promise<OidcStateRecord | null> {
    const key = oidcStateKey(state);
    const raw = await this.redis.getdel(key);
    if (raw === null) return null;
    const parsed = stateRecord.safeParse(JSON.parse(raw));
    if (!parsed.success) return null;
    const codeVerifier = openText(this.keyring, parsed.data.codeVerifier, key);
    return codeVerifier === null ? null : { ...parsed.data, codeVerifier };
  }
}
