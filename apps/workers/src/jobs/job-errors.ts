import { UnrecoverableError } from 'bullmq';

/**
 * Failures that retrying cannot fix. Extending UnrecoverableError makes BullMQ fail the job
 * at once instead of spending its attempts; `code` is what the dead letter records.
 */
export class InvalidPayloadError extends UnrecoverableError {
  readonly code = 'Validation';

  constructor(jobName: string, detail: string) {
    super(`invalid payload for job ${jobName}: ${detail}`);
    this.name = 'InvalidPayloadError';
  }
}

export class UnknownJobError extends UnrecoverableError {
  readonly code = 'Validation';

  constructor(queue: string, jobName: string) {
    super(`queue ${queue} has no job named ${jobName} in the job map`);
    this.name = 'UnknownJobError';
  }
}
