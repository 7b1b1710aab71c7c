import {
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { ConnectionId } from '@syncline/core';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** The queue and job the workers read connections with (apps/workers job-map: `connection.pull`). */
export const PULL_QUEUE_NAME = 'pull';
export const PULL_JOB_NAME = 'connection.pull';
/** The workers' schema caps the reason at 200 characters. */
const MAX_REASON = 200;
const ENQUEUE_TIMEOUT_MS = 3_000;

/** Injection tokens for the BullMQ queue the API adds pulls to, and its Redis connection. */
export const PULL_QUEUE = Symbol('PULL_QUEUE');
const QUEUE_REDIS = Symbol('QUEUE_REDIS');

/** The job id of a connection's pull: one pending pull per connection, a second add joins it. */
export const pullJobId = (connectionId: string): string => `pull.${connectionId}`;
/** The id the workers hand a pull over to (apps/workers pull.service: pullJobIds). */
export const pullContinuationJobId = (connectionId: string): string => `pull.${connectionId}.next`;

/**
 * The "pull requested while running" handshake with the workers (apps/workers/src/pull/
 * pull-requests.ts describes it and holds the job's half; keys, script and TTL must match).
 * While `pull.<id>` runs, adding `pull.<id>` is dropped as a duplicate, and a change made
 * after the running job read past it would wait for the next scheduled pull-all. So the
 * enqueuer first records the request (at Redis's time), which a running job takes once caught
 * up and reads another round for; in the same step it reads which job, if any, has already
 * caught up without one (`pull-closing`), and adds the other id so a fresh pull runs after it.
 */
export const pullRequestedKey = (prefix: string, connectionId: string): string =>
  `${prefix}:pull-requested:${connectionId}`;
export const pullClosingKey = (prefix: string, connectionId: string): string =>
  `${prefix}:pull-closing:${connectionId}`;
const REQUEST_TTL_MS = 10 * 60_000;
const REQUEST_SCRIPT = `local t = redis.call('TIME')
redis.call('SET', KEYS[1], string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)), 'PX', ARGV[1])
return redis.call('GET', KEYS[2])`;

/**
 * Asks the workers to read a connection. The options are the workers' defaults for the
 * `pull` queue (attempts 6, exponential backoff from 2 s, removed when done, kept when
 * failed), so a pull added here behaves like one the workers add themselves.
 */
@Injectable()
export class PullQueue {
  constructor(
    @Inject(PULL_QUEUE) private readonly queue: Queue,
    @Inject(QUEUE_REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectPinoLogger(PullQueue.name) private readonly logger: PinoLogger,
  ) {}

  /**
   * A second pull while one is pending joins it (same job id); one asked for while a pull
   * runs is taken by that pull or runs after it (see REQUEST_SCRIPT). Redis away: a 503 within
   * ENQUEUE_TIMEOUT_MS rather than a request that hangs while BullMQ waits to reconnect.
   */
  async enqueue(connectionId: ConnectionId, reason: string): Promise<void> {
    const added = this.request(connectionId).then((jobId) =>
      this.queue.add(
        PULL_JOB_NAME,
        { connectionId, reason: reason.slice(0, MAX_REASON) },
        {
          jobId,
          attempts: 6,
          backoff: { type: 'exponential', delay: 2_000 },
          removeOnComplete: true,
          removeOnFail: false,
        },
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

  /** Leaves the request; the job id to add: the usual one, unless its job already finished reading. */
  private async request(connectionId: string): Promise<string> {
    const prefix = this.config.REDIS_PREFIX;
    const closing = await this.redis.eval(
      REQUEST_SCRIPT,
      2,
      pullRequestedKey(prefix, connectionId),
      pullClosingKey(prefix, connectionId),
      String(REQUEST_TTL_MS),
    );
    return closing === pullJobId(connectionId)
      ? pullContinuationJobId(connectionId)
      : pullJobId(connectionId);
  }
}

/**
 * BullMQ needs a connection without ioredis's keyPrefix (it prefixes keys itself, with
 * REDIS_PREFIX), so the queue does not share the app's Redis client.
 */
@Global()
@Module({
  providers: [
    {
      provide: QUEUE_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        const connection = new Redis(config.REDIS_URL, {
          connectTimeout: 2_000,
          maxRetriesPerRequest: 1,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
        });
        return connection;
      },
    },
    {
      provide: PULL_QUEUE,
      inject: [APP_CONFIG, QUEUE_REDIS, PinoLogger],
      useFactory: (config: AppConfig, connection: Redis, logger: PinoLogger) => {
        logger.setContext('PullQueue');
        const queue = new Queue(PULL_QUEUE_NAME, { connection, prefix: config.REDIS_PREFIX });
        // BullMQ re-emits connection errors on the queue; log only the first of a run.
        let down = false;
        queue.on('error', (error: Error) => {
          if (!down) logger.warn({ err: error }, 'queue redis connection failed; retrying');
          down = true;
        });
        connection.on('ready', () => {
          down = false;
        });
        return queue;
      },
    },
    PullQueue,
  ],
  exports: [PullQueue],
})
export class PullQueueModule implements OnApplicationShutdown {
  constructor(
    @Inject(PULL_QUEUE) private readonly queue: Queue,
    @Inject(QUEUE_REDIS) private readonly redis: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // The connection was handed in, so BullMQ leaves it open: close it here.
    await this.queue.close();
    this.redis.disconnect();
  }
}
