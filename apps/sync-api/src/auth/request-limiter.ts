import { Inject, Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

const WINDOW_SEC = 10;
/** A process takes a hundredth of a key's allowance from Redis at a time, at most this many requests. */
const LEASE_MAX = 100;
/** What a process leased and did not use within this long lapses: an idle process holds nothing for long. */
const LEASE_MS = 1_000;

interface Lease {
  left: number;
  until: number;
}

/**
 * Requests per API key per 10 s, counted in Redis so that every API process shares one
 * allowance per key. When Redis is away the count goes on in this process's memory (at the
 * same rate), so a Redis outage neither stops the API nor lifts the limit.
 *
 * A process takes its requests from the shared count in blocks of a hundredth of the
 * allowance (one at a time below 200 requests per 10 s), and serves a block from memory:
 * one Redis round trip per block instead of per request. The price is precision: the
 * allowance can fall short by less than a block per process (a block taken but not used
 * before it lapses, or refused for being larger than what was left), never exceeded.
 */
@Injectable()
export class RequestLimiter {
  private readonly limiter: RateLimiterRedis | undefined;
  private readonly block: number;
  private readonly leases = new Map<string, Lease>();
  private readonly refills = new Map<string, Promise<number | null>>();
  readonly points: number;

  constructor(@Inject(Redis) redis: Redis, @Inject(APP_CONFIG) config: AppConfig) {
    this.points = config.API_RATE_LIMIT_PER_10S;
    this.block = Math.max(1, Math.min(LEASE_MAX, Math.floor(this.points / 100)));
    this.limiter =
      this.points === 0
        ? undefined
        : new RateLimiterRedis({
            storeClient: redis,
            keyPrefix: 'api-rate',
            points: this.points,
            duration: WINDOW_SEC,
            insuranceLimiter: new RateLimiterMemory({ points: this.points, duration: WINDOW_SEC }),
          });
  }

  /** Counts a request of this key: null when allowed, else the seconds until it would be. */
  async take(keyId: string): Promise<number | null> {
    if (this.limiter === undefined) return null;
    for (;;) {
      if (this.takeLeased(keyId)) return null;
      // Requests that find the lease used up wait for one refill together.
      let refill = this.refills.get(keyId);
      if (refill === undefined) {
        refill = this.refill(this.limiter, keyId).finally(() => this.refills.delete(keyId));
        this.refills.set(keyId, refill);
      }
      const wait = await refill;
      if (wait !== null) return wait;
      // Others waiting on the same refill may have used it up: take again.
    }
  }

  private takeLeased(keyId: string): boolean {
    const lease = this.leases.get(keyId);
    if (lease === undefined) return false;
    if (lease.left > 0 && lease.until > Date.now()) {
      lease.left--;
      return true;
    }
    this.leases.delete(keyId);
    return false;
  }

  private async refill(limiter: RateLimiterRedis, keyId: string): Promise<number | null> {
    try {
      const granted = await limiter.consume(keyId, this.block);
      // Never shorter than a moment, so the requests that waited for it can use it.
      const lasts = Math.max(50, Math.min(LEASE_MS, granted.msBeforeNext));
      this.leases.set(keyId, { left: this.block, until: Date.now() + lasts });
      return null;
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw refusal;
    }
  }
}
