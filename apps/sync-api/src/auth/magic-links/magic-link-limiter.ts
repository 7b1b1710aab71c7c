import { Inject, Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

const WINDOW_SEC = 60 * 60;

function limiter(redis: Redis, keyPrefix: string, points: number): RateLimiterRedis | undefined {
  if (points === 0) return undefined;
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: WINDOW_SEC,
    insuranceLimiter: new RateLimiterMemory({ points, duration: WINDOW_SEC }),
  });
}

/**
 * Sign-in links asked for, per address and per client address, counted in Redis for every
 * API process. Every request counts, whether or not the address may sign in, so the limit
 * says nothing about who is a member.
 */
@Injectable()
export class MagicLinkLimiter {
  private readonly perEmail: RateLimiterRedis | undefined;
  private readonly perIp: RateLimiterRedis | undefined;

  constructor(@Inject(Redis) redis: Redis, @Inject(APP_CONFIG) config: AppConfig) {
    this.perEmail = limiter(redis, 'magic-link-email', config.MAGIC_LINKS_PER_EMAIL_PER_HOUR);
    this.perIp = limiter(redis, 'magic-link-ip', config.MAGIC_LINKS_PER_IP_PER_HOUR);
  }

  /** Null when allowed, else the seconds until it would be. */
  async take(email: string, ip: string): Promise<number | null> {
    for (const [limit, key] of [
      [this.perIp, ip],
      [this.perEmail, email],
    ] as const) {
      if (limit === undefined) continue;
      try {
        await limit.consume(key);
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
        throw refusal;
      }
    }
    return null;
  }
}
