import {
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { ConnectionId } from '@syncline/core';
import { JobClient, PullRequests } from '@syncline/jobs';
import { Redis } from 'ioredis';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** The job map's schema caps a pull's reason at 200 characters. */
const MAX_REASON = 200;
/** Redis away: a 503 within this rather than a request that hangs while BullMQ reconnects. */
const ENQUEUE_TIMEOUT_MS = 3_000;

const QUEUE_REDIS = Symbol('QUEUE_REDIS');

/**
 * Asks the workers to read a connection. A second pull while one is pending joins it (same
 * job id); one asked for while a pull runs is taken by that pull or runs after it: the
 * request is left first (PullRequests, @syncline/jobs), which answers the job id to add.
 */
@Injectable()
export class PullQueue {
  private readonly requests: PullRequests;

  constructor(
    @Inject(JobClient) private readonly jobs: JobClient,
    @Inject(QUEUE_REDIS) redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(PullQueue.name) private readonly logger: PinoLogger,
  ) {
    this.requests = new PullRequests(redis, config.REDIS_PREFIX);
  }

  async enqueue(connectionId: ConnectionId, reason: string): Promise<void> {
    const added = this.requests
      .request(connectionId)
      .then((jobId) =>
        this.jobs.enqueue(
          'connection.pull',
          { connectionId, reason: reason.slice(0, MAX_REASON) },
          { jobId },
        ),
      );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out adding the pull job')), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([added, timeout]);
    } catch (error) {
      added.catch(() => undefined);
      this.logger.warn({ err: error, connectionId }, 'could not enqueue a pull');
      throw new ServiceUnavailableException('cannot queue work right now; try again');
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The API's side of the workers' queues: one JobClient (pulls, replays, dry runs) on a Redis
 * connection of its own, without ioredis's keyPrefix (BullMQ prefixes keys itself, with
 * REDIS_PREFIX).
 */
@Global()
@Module({
  providers: [
    {
      provide: QUEUE_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new Redis(config.REDIS_URL, {
          connectTimeout: 2_000,
          maxRetriesPerRequest: 1,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
        }),
    },
    {
      provide: JobClient,
      inject: [APP_CONFIG, QUEUE_REDIS, PinoLogger],
      useFactory: (config: AppConfig, connection: Redis, logger: PinoLogger) => {
        logger.setContext('JobClient');
        // BullMQ re-emits connection errors on every queue; log only the first of a run.
        let down = false;
        connection.on('ready', () => {
          down = false;
        });
        return new JobClient({
          connection,
          prefix: config.REDIS_PREFIX,
          timeoutMs: ENQUEUE_TIMEOUT_MS,
          onError: (error) => {
            if (!down) logger.warn({ err: error }, 'queue redis connection failed; retrying');
            down = true;
          },
        });
      },
    },
    PullQueue,
  ],
  exports: [PullQueue, JobClient],
})
export class PullQueueModule implements OnApplicationShutdown {
  constructor(
    @Inject(JobClient) private readonly jobs: JobClient,
    @Inject(QUEUE_REDIS) private readonly redis: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // The connection was handed in, so BullMQ leaves it open: close it here.
    await this.jobs.close();
    this.redis.disconnect();
  }
}
