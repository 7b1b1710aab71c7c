import type { JobsOptions } from 'bullmq';
import type { JobMap } from './job-map';

/** Options every job of a queue gets; BullMQ applies them to raw adds too. */
export function defaultJobOptions(map: JobMap, queueName: string): JobsOptions {
  const queue = map.queues[queueName];
  if (queue === undefined) throw new Error(`queue ${queueName} is not in the job map`);
  return {
    attempts: queue.attempts,
    backoff: { type: 'exponential', delay: queue.backoffMs },
    // A finished job must not linger under its deterministic id, or the next enqueue of
    // that id would be dropped as a duplicate.
    removeOnComplete: true,
    // Failed jobs stay until the workers copy them to dead_letter, then are removed.
    removeOnFail: false,
  };
}

/** The options a job is added with, whoever adds it: its queue's, its own attempts, its deterministic id. */
export function jobOptions(map: JobMap, jobName: string, data: unknown): JobsOptions {
  const definition = jobDefinition(map, jobName);
  const jobId = definition.jobId?.(data);
  return {
    ...defaultJobOptions(map, definition.queue),
    ...(definition.attempts === undefined ? {} : { attempts: definition.attempts }),
    ...(jobId === undefined ? {} : { jobId }),
  };
}

export function jobDefinition(map: JobMap, jobName: string) {
  const definition = map.jobs[jobName];
  if (definition === undefined) throw new Error(`job ${jobName} is not in the job map`);
  return definition;
}

/** The attempts a job gets before it is dead-lettered (its own, else its queue's). */
export function attemptsOf(map: JobMap, jobName: string): number {
  const definition = jobDefinition(map, jobName);
  return definition.attempts ?? map.queues[definition.queue]?.attempts ?? 1;
}
