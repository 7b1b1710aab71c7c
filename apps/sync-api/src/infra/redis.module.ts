import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

// Short timeouts: the API must answer a readiness probe quickly when Redis is away, and
// commands fail fast instead of queueing while it reconnects in the background.
const CONNECT_TIMEOUT_MS = 2_000;
const RETRY_CAP_MS = 2_000;

/** The process's Redis connection, injected by its class. */
@Global()
@Module({
  providers: [
    {
      provide: Redis,
      inject: [APP_CONFIG, PinoLogger],
      useFactory: (config: AppConfig, logger: PinoLogger) => {
        logger.setContext('Redis');
        const redis = new Redis(config.REDIS_URL, {
          keyPrefix: `${config.REDIS_PREFIX}:`,
          connectTimeout: CONNECT_TIMEOUT_MS,
          maxRetriesPerRequest: 1,
          retryStrategy: (attempt) => Math.min(attempt * 200, RETRY_CAP_MS),
        });
        // Without a listener ioredis prints every failed reconnect; log only the first of a run.
        let down = false;
        redis.on('error', (error: Error) => {
          if (!down) logger.warn({ err: error }, 'redis connection failed; retrying');
          down = true;
        });
        redis.on('ready', () => {
          down = false;
        });
        return redis;
      },
    },
  ],
  exports: [Redis],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(Redis) private readonly redis: Redis) {}

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
