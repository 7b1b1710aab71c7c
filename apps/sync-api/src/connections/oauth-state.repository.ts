import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PROVIDER_KEYS, type ProviderKey, type WorkspaceId } from '@syncline/core';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { OAUTH_PROVIDERS, type OAuthProvider } from './oauth.schemas';

/** What a state stands for: who started the connect, and what its consent may create. */
export interface OAuthStateRecord {
  provider: OAuthProvider;
  workspaceId: WorkspaceId;
  /** `actorRef` of the key or member that started it. */
  actor: string;
  /**
   * Started from a browser session: the hex SHA-256 of its cookie's id. The callback must come
   * with the same cookie, so a state lured into another browser connects nothing.
   */
  sessionHash?: string | undefined;
  products: ProviderKey[];
  /** The app path to send the browser back to (a browser connect); absent: the callback answers JSON. */
  returnTo?: string | undefined;
  /** New connections start in dry run. */
  dryRun?: boolean | undefined;
}

const stateRecord = z.object({
  provider: z.enum(OAUTH_PROVIDERS),
  workspaceId: z.uuid(),
  actor: z.string().min(1),
  sessionHash: z.string().optional(),
  products: z.array(z.enum(PROVIDER_KEYS)).min(1),
  returnTo: z.string().optional(),
  dryRun: z.boolean().optional(),
});

/**
 * The Redis key of a state (under the app's key prefix). Only a hash of the state is
 * stored, so the key space read back (a dump, MONITOR) does not hand out usable states.
 */
export const oauthStateKey = (state: string): string =>
  `oauth-state:${createHash('sha256').update(state).digest('hex')}`;

/** Pending OAuth consents in Redis: each state expires on its own and can be taken once. */
@Injectable()
export class OAuthStateRepository {
  constructor(@Inject(Redis) private readonly redis: Redis) {}

  /** False if the state is already pending (a collision of 256 random bits: a bug). */
  async save(state: string, record: OAuthStateRecord, ttlSeconds: number): Promise<boolean> {
    const saved = await this.redis.set(oauthStateKey(state), JSON.stringify(record), 'EX', ttlSeconds, 'NX');
    return saved === 'OK';
  }

  /** The state's record, deleting it in the same step; null when unknown, expired or already taken. */
  async take(state: string): Promise<OAuthStateRecord | null> {
    const raw = await this.redis.getdel(oauthStateKey(state));
    if (raw === null) return null;
    const parsed = stateRecord.parse(JSON.parse(raw));
    return {
      provider: parsed.provider,
      workspaceId: parsed.workspaceId as WorkspaceId,
      actor: parsed.actor,
      sessionHash: parsed.sessionHash,
      products: parsed.products,
      returnTo: parsed.returnTo,
      dryRun: parsed.dryRun,
    };
  }
}
