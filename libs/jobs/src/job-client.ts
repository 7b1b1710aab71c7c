import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOB_MAP, type JobMap, type JobName, type JobPayload } from './job-map';
import { jobDefinition, jobOptions } from './job-options';

export interface JobClientOptions {
  /** A Redis connection without a key prefix: BullMQ prefixes its keys itself, with `prefix`. */
  connection: Redis;
  /** REDIS_PREFIX. */
  prefix: string;
  /** Defaults to the production JOB_MAP. */
  map?: JobMap;
  /** An add that takes longer fails (Redis away) instead of waiting for BullMQ to reconnect. */
  timeoutMs?: number;
  /** Connection errors the queues re-emit; unhandled they would crash the process. */
  onError?: (error: Error) => void;
}

/**
 * Adds jobs of the map from outside the workers (the API): the payload is checked against
 * the job's schema and the job gets the options the workers give it (attempts, backoff, its
 * deterministic id), so a job added here behaves like one the workers add themselves. A
 * queue is opened on its first add.
 */
export class JobClient {
  private readonly map: JobMap;
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly options: JobClientOptions) {
    this.map = options.map ?? JOB_MAP;
  }

  /** Returns the job id; a deterministic id already pending is not added twice (the add joins it). */
  async enqueue<N extends JobName>(
    jobName: N,
    payload: JobPayload<N>,
    options: { jobId?: string } = {},
  ): Promise<string> {
    const definition = jobDefinition(this.map, jobName);
    // A bad payload here is a bug in the producer: throw at the call site, not in a worker.
    const data: unknown = definition.schema.parse(payload);
    const added = this.queue(definition.queue).add(jobName, data, {
      ...jobOptions(this.map, jobName, data),
      ...(options.jobId === undefined ? {} : { jobId: options.jobId }),
    });
    const job = await withTimeout(added, this.options.timeoutMs, `timed out adding job ${jobName}`);
    return job.id ?? '';
  }

  queue(queueName: string): Queue {
    let queue = this.queues.get(queueName);
    if (queue === undefined) {
      if (this.map.queues[queueName] === undefined)
        throw new Error(`queue ${queueName} is not in the job map`);
      queue = new Queue(queueName, { connection: this.options.connection, prefix: this.options.prefix });
      queue.on('error', (error: Error) => this.options.onError?.(error));
      this.queues.set(queueName, queue);
    }
    return queue;
  }

  /** Closes the queues; the connection was handed in, so it stays open. */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number | undefined, message: string): Promise<T> {
  if (ms === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (error) {
    // The add may still settle later: its failure must not go unhandled.
    work.catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
