import { Inject, Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

const WINDOW_SEC = 10;

/**
 * Requests per API key per 10 s, counted in Redis so that every API process shares one
 * allowance per key. When Redis is away the count goes on in this process's memory (at the
 * same rate), so a Redis outage neither stops the API nor lifts the limit.
 */
@Injectable()
export class RequestLimiter {
  private readonly limiter: RateLimiterRedis | undefined;
  readonly points: number;

  constructor(@Inject(Redis) redis: Redis, @Inject(APP_CONFIG) config: AppConfig) {
    this.points = config.API_RATE_LIMIT_PER_10S;
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
    try {
      await this.limiter.consume(keyId);
      return null;
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw refusal;
    }
  }
}
