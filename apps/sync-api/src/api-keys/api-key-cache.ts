import { Inject, Injectable } from '@nestjs/common';
import { PgListener } from '../infra/pg-listener';
import type { ApiKeyCredential } from './api-keys.repository';

/**
 * NOTIFY channel on which a change of a key's row (a revocation) names the key's prefix, when
 * its transaction commits.
 */
export const API_KEY_CHANNEL = 'syncline_api_key';

/** A backstop only: revocations reach every process through API_KEY_CHANNEL at once. */
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** How long a prefix found absent is answered without a lookup. */
const ABSENT_TTL_MS = 60_000;

interface Entry {
  credential: ApiKeyCredential;
  at: number;
}

/**
 * The API keys this process authenticated lately, by prefix, so that a request costs no
 * key lookup in PostgreSQL. Correct only while every revocation is heard: the cache serves
 * nothing unless LISTEN on API_KEY_CHANNEL is in place, and empties when that connection is
 * lost. A lookup that raced a revocation (read before its commit, stored after its
 * notification was heard) is caught by the generation: every notification bumps it, and a
 * result is kept only if no notification arrived while it was being read.
 */
@Injectable()
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * Prefixes recently found absent, and when. A prefix is random and first shown with its
   * key, after the key's row has committed, so no request can find absent a prefix that is
   * about to exist (but by a 2^-64 chance, which the TTL bounds): this needs no notification.
   */
  private readonly absentPrefixes = new Map<string, number>();
  private active = false;
  private generationCount = 0;

  constructor(@Inject(PgListener) listener: PgListener) {
    listener.listen(API_KEY_CHANNEL, {
      message: (prefix) => this.forget(prefix),
      listening: () => {
        this.generationCount++;
        this.active = true;
      },
      lost: () => {
        this.generationCount++;
        this.active = false;
        this.entries.clear();
      },
    });
  }

  /** A key's row changed (a revocation): read it again. Undefined: some key, unknown which. */
  forget(prefix: string | undefined): void {
    this.generationCount++;
    if (prefix) this.entries.delete(prefix);
    else this.entries.clear();
  }

  /** Taken before a lookup and handed to `put` with its result. */
  get generation(): number {
    return this.generationCount;
  }

  get(prefix: string, now = Date.now()): ApiKeyCredential | undefined {
    if (!this.active) return undefined;
    const entry = this.entries.get(prefix);
    if (!entry) return undefined;
    if (now - entry.at > TTL_MS) {
      this.entries.delete(prefix);
      return undefined;
    }
    return entry.credential;
  }

  put(credential: ApiKeyCredential, generation: number, now = Date.now()): void {
    if (!this.active || generation !== this.generationCount) return;
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(credential.prefix)) {
      // The oldest insertion goes first.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(credential.prefix, { credential, at: now });
  }

  /** True when no key had this prefix a moment ago (see `absentPrefixes`). */
  isAbsent(prefix: string, now = Date.now()): boolean {
    const at = this.absentPrefixes.get(prefix);
    if (at === undefined) return false;
    if (now - at <= ABSENT_TTL_MS) return true;
    this.absentPrefixes.delete(prefix);
    return false;
  }

  /** A lookup found no key with this prefix. */
  putAbsent(prefix: string, now = Date.now()): void {
    if (this.absentPrefixes.size >= MAX_ENTRIES && !this.absentPrefixes.has(prefix)) {
      const oldest = this.absentPrefixes.keys().next().value;
      if (oldest !== undefined) this.absentPrefixes.delete(oldest);
    }
    this.absentPrefixes.set(prefix, now);
  }

  /** A key with this prefix was just made here. */
  created(prefix: string): void {
    this.absentPrefixes.delete(prefix);
  }

  /** The key's last use as recorded, so that the entry does not ask for the write again. */
  touched(prefix: string, at: Date): void {
    const entry = this.entries.get(prefix);
    if (entry) entry.credential = { ...entry.credential, lastUsedAt: at };
  }

  get size(): number {
    return this.entries.size;
  }
}
