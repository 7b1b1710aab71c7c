import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { z } from 'zod';

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
  codeVerifier: z.string().min(1),
  returnTo: z.string().min(1),
  browserHash: z.string().length(64),
});

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The Redis key of a state (under the app's prefix); a hash, so the key space hands out no usable state. */
export const oidcStateKey = (state: string): string => `oidc-state:${sha256Hex(state)}`;

/** Sign-ins in flight, in Redis: each state expires on its own and can be taken once. */
@Injectable()
export class OidcStateRepository {
  constructor(@Inject(Redis) private readonly redis: Redis) {}

  /** False if the state is already pending (a collision of random states: a bug). */
  async save(state: string, record: OidcStateRecord, ttlSeconds: number): Promise<boolean> {
    const saved = await this.redis.set(oidcStateKey(state), JSON.stringify(record), 'EX', ttlSeconds, 'NX');
    return saved === 'OK';
  }

  /** The state's record, deleted in the same step; null when unknown, expired or already taken. */
  async take(state: string): Promise<OidcStateRecord | null> {
    const raw = await this.redis.getdel(oidcStateKey(state));
    if (raw === null) return null;
    const parsed = stateRecord.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  }
}
