import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Keyring, PROVIDER_KEYS, type ProviderKey, type WorkspaceId } from '@syncline/core';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { openText, sealedTextSchema, sealText } from '../common/sealed-text';
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
  /**
   * The PKCE verifier (RFC 7636) behind the authorize URL's challenge: the code exchange must
   * present it. Sealed in Redis; never sent to the browser or logged.
   */
  codeVerifier: string;
}

const stateRecord = z.object({
  provider: z.enum(OAUTH_PROVIDERS),
  workspaceId: z.uuid(),
  actor: z.string().min(1),
  sessionHash: z.string().optional(),
  products: z.array(z.enum(PROVIDER_KEYS)).min(1),
  returnTo: z.string().optional(),
  dryRun: z.boolean().optional(),
  /** Sealed under the keyring, bound to this state's key (the associated data). */
  codeVerifier: sealedTextSchema,
});

/**
 * The Redis key of a state (under the app's key prefix). Only a hash of the state is
 * stored, so the key space read back (a dump, MONITOR) does not hand out usable states.
 */
export const oauthStateKey = (state: string): string =>
  `oauth-state:${createHash('sha256').update(state).digest('hex')}`;

/**
 * Pending OAuth consents in Redis: each state expires on its own and can be taken once. The
 * PKCE verifier is sealed as provider credentials are, so a read of Redis hands out neither a
 * usable state nor a verifier.
 */
@Injectable()
export class OAuthStateRepository {
  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(Keyring) private readonly keyring: Keyring,
  ) {}

  /** False if the state is already pending (a collision of 256 random bits: a bug). */
  async save(state: string, record: OAuthStateRecord, ttlSeconds: number): Promise<boolean> {
    const key = oauthStateKey(state);
    const stored: z.input<typeof stateRecord> = {
      ...record,
      codeVerifier: sealText(this.keyring, record.codeVerifier, key),
    };
    const saved = await this.redis.set(key, JSON.stringify(stored), 'EX', ttlSeconds, 'NX');
    return saved === 'OK';
  }

  /**
   * The state's record, deleting it in the same step; null when unknown, expired or already
   * taken, or when its verifier does not open (saved before connects carried one, copied from
   * another state's key, or sealed under a key since removed from the keyring): that connect
   * is started again.
   */
  async take(state: string): Promise<OAuthStateRecord | null> {
    const key = oauthStateKey(state);
    const raw = await this.redis.getdel(key);
    if (raw === null) return null;
    const parsed = stateRecord.safeParse(JSON.parse(raw));
    if (!parsed.success) return null;
    const codeVerifier = openText(this.keyring, parsed.data.codeVerifier, key);
    if (codeVerifier === null) return null;
    return {
      provider: parsed.data.provider,
      workspaceId: parsed.data.workspaceId as WorkspaceId,
      actor: parsed.data.actor,
      sessionHash: parsed.data.sessionHash,
      products: parsed.data.products,
      returnTo: parsed.data.returnTo,
      dryRun: parsed.data.dryRun,
      codeVerifier,
    };
  }
}
