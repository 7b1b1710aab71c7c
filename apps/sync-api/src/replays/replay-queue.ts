import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** The queue and job the workers replay with (apps/workers job-map: `workspace.replay`). */
export const REPLAY_QUEUE_NAME = 'replay';
export const REPLAY_JOB_NAME = 'workspace.replay';
/** The workers' job id for a replay: the replay's own id, so an enqueue twice is one job. */
export const replayJobId = (replayId: string): string => `replay.${replayId}`;
const ENQUEUE_TIMEOUT_MS = 3_000;

/**
 * Adds replay jobs for the workers, with the workers' options for the `replay` queue
 * (attempts 3, exponential backoff from 5 s, removed when done, kept when failed). Its own
 * Redis connection without a key prefix (BullMQ prefixes keys itself), made on first use.
 */
@Injectable()
export class ReplayQueue implements OnApplicationShutdown {
  private queue: Queue | undefined;
  private redis: Redis | undefined;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async enqueue(replayId: string): Promise<void> {
    if (this.queue === undefined) {
      this.redis = new Redis(this.config.REDIS_URL, {
        connectTimeout: 2_000,
        maxRetriesPerRequest: 1,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      this.redis.on('error', () => undefined);
      this.queue = new Queue(REPLAY_QUEUE_NAME, { connection: this.redis, prefix: this.config.REDIS_PREFIX });
      this.queue.on('error', () => undefined);
    }
    const added = this.queue.add(
      REPLAY_JOB_NAME,
      { replayId },
      {
        jobId: replayJobId(replayId),
        attempts: 3,
        backoff: { type: 'exponential', delay: 5_000 },
        removeOnComplete: true,
        removeOnFail: false,
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out adding the replay job')), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([added, timeout]);
    } catch (error) {
      added.catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue?.close();
    this.redis?.disconnect();
  }
}
