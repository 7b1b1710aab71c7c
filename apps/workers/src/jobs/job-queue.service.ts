import { Inject, Injectable } from '@nestjs/common';
import { jobDefinition, jobOptions } from '@syncline/jobs';
import type { JobsOptions, Queue } from 'bullmq';
import { JOB_MAP_TOKEN, type JobMap, type JobName, type JobPayload } from './job-map';

/** Injection token: the BullMQ Queue of every queue in the map, by name. */
export const QUEUES_BY_NAME = Symbol('QUEUES_BY_NAME');

/** Typed enqueueing: a payload is checked against its schema before it reaches Redis. */
@Injectable()
export class JobQueue {
  constructor(
    @Inject(JOB_MAP_TOKEN) private readonly map: JobMap,
    @Inject(QUEUES_BY_NAME) private readonly queues: ReadonlyMap<string, Queue>,
  ) {}

  /** Returns the job id; a deterministic id already pending is not added twice. */
  async enqueue<N extends JobName>(
    jobName: N,
    payload: JobPayload<N>,
    options: { delayMs?: number } = {},
  ): Promise<string> {
    const definition = this.definition(jobName);
    // A bad payload here is a bug in the producer: throw at the call site, not in a worker.
    const data: unknown = definition.schema.parse(payload);
    const job = await this.queue(definition.queue).add(jobName, data, {
      ...this.jobOptions(jobName, data),
      ...(options.delayMs === undefined ? {} : { delay: options.delayMs }),
    });
    return job.id ?? '';
  }

  /** The options a job is added with (also used for job scheduler templates). */
  jobOptions(jobName: string, data: unknown): JobsOptions {
    return jobOptions(this.map, jobName, data);
  }

  /** The BullMQ queue a job runs on. */
  queueOf(jobName: string): Queue {
    return this.queue(this.definition(jobName).queue);
  }

  queue(queueName: string): Queue {
    const queue = this.queues.get(queueName);
    if (queue === undefined) throw new Error(`queue ${queueName} is not in the job map`);
    return queue;
  }

  private definition(jobName: string) {
    return jobDefinition(this.map, jobName);
  }
}
