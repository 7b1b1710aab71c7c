import { Inject, Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

const WINDOW_SEC = 60;
/** Addresses this process remembers as refused; beyond it the oldest is forgotten (it is refused again at its next failure). */
const MAX_REFUSED = 10_000;

/**
 * Failed authentications per client address, counted in Redis so that every API process
 * shares one allowance per address (in this process's memory while Redis is away). An
 * address past its allowance is refused for the rest of the window, before its key is
 * looked at: guesses then cost neither a lookup nor an answer that says whether they were
 * right.
 *
 * The count is shared; the refusal is remembered by each process that has seen it (its own
 * failed attempt told it), so a request costs no Redis round trip unless it fails.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limiter: RateLimiterRedis | undefined;
  private readonly refusedUntil = new Map<string, number>();
  readonly allowance: number;

  constructor(@Inject(Redis) redis: Redis, @Inject(APP_CONFIG) config: AppConfig) {
    this.allowance = config.API_AUTH_FAILURES_PER_MIN;
    this.limiter =
      this.allowance === 0
        ? undefined
        : new RateLimiterRedis({
            storeClient: redis,
            keyPrefix: 'api-auth-failures',
            points: this.allowance,
            duration: WINDOW_SEC,
            blockDuration: WINDOW_SEC,
            insuranceLimiter: new RateLimiterMemory({
              points: this.allowance,
              duration: WINDOW_SEC,
              blockDuration: WINDOW_SEC,
            }),
          });
  }

  /** Seconds until this address may try again, when this process knows it refused; else null. */
  refused(address: string, now = Date.now()): number | null {
    const until = this.refusedUntil.get(address);
    if (until === undefined) return null;
    if (until > now) return Math.max(1, Math.ceil((until - now) / 1000));
    this.refusedUntil.delete(address);
    return null;
  }

  /** Counts a failed authentication: null while the address has attempts left, else the seconds to wait. */
  async failed(address: string): Promise<number | null> {
    if (this.limiter === undefined) return null;
    try {
      await this.limiter.consume(address);
      return null;
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      if (this.refusedUntil.size >= MAX_REFUSED && !this.refusedUntil.has(address)) {
        const oldest = this.refusedUntil.keys().next().value;
        if (oldest !== undefined) this.refusedUntil.delete(oldest);
      }
      this.refusedUntil.set(address, Date.now() + refusal.msBeforeNext);
      return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
    }
  }
}
