import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { ROOT_LOGGER } from '../infra/connections';
import type { JobName } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';

const JOB: JobName = 'connection.renew';
export const RENEW_SCHEDULER_ID = JOB;
/** Ten runs inside the hour before a subscription expires: a failed renewal has time to be retried. */
export const RENEW_INTERVAL_MS = 600_000;

/** Keeps a BullMQ job scheduler running connection.renew every 10 minutes. */
@Injectable()
export class RenewScheduler implements OnApplicationBootstrap {
  private readonly logger: Logger;

  constructor(
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: RenewScheduler.name });
  }

  async onApplicationBootstrap(): Promise<void> {
    const { jobId: _ignored, ...opts } = this.jobs.jobOptions(JOB, {});
    await this.jobs
      .queueOf(JOB)
      .upsertJobScheduler(RENEW_SCHEDULER_ID, { every: RENEW_INTERVAL_MS }, { name: JOB, data: {}, opts });
    this.logger.info({ everyMs: RENEW_INTERVAL_MS }, 'push subscription renewal scheduled');
  }
}
