import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ERROR_CODES, type Logger } from '@syncline/core';
import { type Job, type Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { REDIS, ROOT_LOGGER } from '../infra/connections';
import { type JobLogFields, jobLogContext } from '../logging/job-log-context';
import { DeadLetterRepository } from './dead-letter.repository';
import { InvalidPayloadError, UnknownJobError } from './job-errors';
import { JobHandlerRegistry } from './job-handler-registry';
import { JOB_MAP_TOKEN, type JobMap } from './job-map';
import { QUEUES_BY_NAME } from './job-queue.service';

/** How often failed jobs still in Redis are copied to dead_letter (see `sweep`). */
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 100;

/**
 * Runs one BullMQ Worker per queue. Each job is dispatched by name to its @JobHandler after
 * its payload is parsed with the map's schema; a payload that does not parse fails at once
 * (it would fail the same way on every retry).
 *
 * A job that fails for good is copied to dead_letter and only then removed from Redis, so a
 * crash between the two leaves it in the failed set, where the periodic sweep finds it.
 * The sweep also catches jobs BullMQ fails without our processor (stalled too often).
 *
 * Workers are created here rather than with @nestjs/bullmq's @Processor: that binds one
 * class per queue at compile time, while handlers here are found per job at boot.
 */
@Injectable()
export class JobWorkersService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly workers: Worker[] = [];
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** Dead-letter writes started by 'failed' events, awaited at shutdown before Postgres closes. */
  private readonly recording = new Set<Promise<void>>();

  constructor(
    @Inject(JOB_MAP_TOKEN) private readonly map: JobMap,
    @Inject(QUEUES_BY_NAME) private readonly queues: ReadonlyMap<string, Queue>,
    @Inject(JobHandlerRegistry) private readonly registry: JobHandlerRegistry,
    @Inject(DeadLetterRepository) private readonly deadLetters: DeadLetterRepository,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: JobWorkersService.name });
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const [queueName, queue] of Object.entries(this.map.queues)) {
      const worker = new Worker(queueName, (job) => this.run(queueName, job), {
        connection: this.redis,
        prefix: this.config.REDIS_PREFIX,
        concurrency: queue.concurrency ?? this.config.WORKER_CONCURRENCY,
      });
      worker.on('failed', (job, error) => {
        const recording = this.onFailed(queueName, job, error);
        this.recording.add(recording);
        void recording.finally(() => this.recording.delete(recording));
      });
      worker.on('error', (error) => this.logger.error({ err: error, queue: queueName }, 'worker error'));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    // Failed jobs left by a process that died before recording them.
    await this.sweep();
  }

  /** Stops taking jobs and waits for running ones, while Postgres and the queues are still open. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    await Promise.all(this.workers.map((worker) => worker.close()));
    await Promise.all([...this.recording, this.sweeping]);
  }

  /** Copies failed jobs still in Redis to dead_letter. Safe to run anywhere, any time: writes are idempotent. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        for (const [queueName, queue] of this.queues) {
          for (const job of await queue.getFailed(0, SWEEP_BATCH - 1)) {
            await this.deadLetter(queueName, job, errorCodeFromReason(job.failedReason), job.failedReason);
          }
        }
      } catch (error) {
        this.logger.error({ err: error }, 'dead-letter sweep failed; the next one retries');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  private async run(queueName: string, job: Job): Promise<unknown> {
    const definition = this.map.jobs[job.name];
    const handler = this.registry.get(job.name);
    // Possible in a rolling deploy, when a newer producer enqueues a job this build lacks;
    // the dead letter can be retried once every worker runs the newer build.
    if (definition === undefined || definition.queue !== queueName || handler === undefined) {
      throw new UnknownJobError(queueName, job.name);
    }
    const parsed = definition.schema.safeParse(job.data);
    if (!parsed.success) throw new InvalidPayloadError(job.name, z.prettifyError(parsed.error));

    const fields: JobLogFields = {
      queue: queueName,
      job: job.name,
      jobId: job.id ?? '',
      attempt: job.attemptsMade + 1,
      ...idFields(parsed.data),
    };
    return jobLogContext.run(fields, async () => {
      const started = performance.now();
      const result = await handler.invoke(parsed.data, {
        queue: queueName,
        jobName: job.name,
        jobId: fields.jobId,
        attempt: fields.attempt,
      });
      this.logger.info({ ms: Math.round(performance.now() - started) }, 'job done');
      return result;
    });
  }

  private async onFailed(queueName: string, job: Job | undefined, error: Error): Promise<void> {
    if (job === undefined) return;
    const fields = { queue: queueName, job: job.name, jobId: job.id, attempt: job.attemptsMade, err: error };
    // BullMQ sets finishedOn only when it gives up on the job; otherwise a retry is scheduled.
    if (job.finishedOn === undefined) {
      this.logger.warn(fields, 'job failed; will retry');
      return;
    }
    await this.deadLetter(queueName, job, errorCode(error), error.message);
  }

  private async deadLetter(queueName: string, job: Job, code: string, message: string): Promise<void> {
    const fields = { queue: queueName, job: job.name, jobId: job.id, attempts: job.attemptsMade };
    try {
      const recorded = await this.deadLetters.recordJob({
        queue: queueName,
        jobName: job.name,
        jobId: job.id ?? '',
        createdAt: job.timestamp,
        data: job.data,
        attempts: job.attemptsMade,
        errorCode: code,
        errorMessage: message,
      });
      if (recorded) this.logger.error({ ...fields, errorCode: code, error: message }, 'job dead-lettered');
    } catch (error) {
      // Left in the failed set: the sweep tries again.
      this.logger.error({ ...fields, err: error }, 'could not record failed job in dead_letter; will retry');
      return;
    }
    try {
      await job.remove();
    } catch (error) {
      // Already removed by the sweep or another process.
      this.logger.debug({ ...fields, err: error }, 'failed job already removed');
    }
  }
}

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** The closed error code an error carries; otherwise why BullMQ gave up on it. */
function errorCode(error: Error): string {
  const code: unknown = Reflect.get(error, 'code');
  if (typeof code === 'string' && KNOWN_CODES.has(code)) return code;
  return error instanceof UnrecoverableError ? 'Unrecoverable' : 'Exhausted';
}

/** The sweep only has BullMQ's stored reason, not the error object. */
function errorCodeFromReason(reason: string): string {
  if (/stalled more than allowable limit|started more than allowable limit/.test(reason)) return 'Stalled';
  if (/^invalid payload for job |has no job named/.test(reason)) return 'Validation';
  return 'Exhausted';
}

function idFields(data: unknown): Pick<JobLogFields, 'workspaceId' | 'connectionId'> {
  if (typeof data !== 'object' || data === null) return {};
  const fields: Pick<JobLogFields, 'workspaceId' | 'connectionId'> = {};
  const workspaceId: unknown = Reflect.get(data, 'workspaceId');
  const connectionId: unknown = Reflect.get(data, 'connectionId');
  if (typeof workspaceId === 'string') fields.workspaceId = workspaceId;
  if (typeof connectionId === 'string') fields.connectionId = connectionId;
  return fields;
}
