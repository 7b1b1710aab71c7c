import type { ErrorCode } from '@syncline/core';
import { UnrecoverableError } from 'bullmq';

/**
 * A connector failure a later attempt may get past (`RateLimited`, `Transient`): BullMQ
 * retries the job with its queue's backoff. `code` is what a dead letter records if the
 * attempts run out.
 */
export class RetryableConnectorError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RetryableConnectorError';
  }
}

/** A connector failure no retry fixes (`Validation`, `NotFound`): the job is dead-lettered at once. */
export class PermanentConnectorError extends UnrecoverableError {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PermanentConnectorError';
  }
}
