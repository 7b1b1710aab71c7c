import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import type { JobName } from '@syncline/jobs';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { ROOT_LOGGER } from '../infra/connections';
import { JobQueue } from '../jobs/job-queue.service';

const JOB: JobName = 'connection.pull-all';
/** The scheduler id; one per job, so every worker process upserts the same one. */
export const PULL_ALL_SCHEDULER_ID = JOB;

/** Keeps a BullMQ job scheduler running connection.pull-all every PULL_INTERVAL_MS. */
@Injectable()
export class PullScheduler implements OnApplicationBootstrap {
  private readonly logger: Logger;

  constructor(
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: PullScheduler.name });
  }

  async onApplicationBootstrap(): Promise<void> {
    // Scheduled jobs get ids from BullMQ (scheduler id + time), not the map's deterministic one.
    const { jobId: _ignored, ...opts } = this.jobs.jobOptions(JOB, {});
    await this.jobs
      .queueOf(JOB)
      .upsertJobScheduler(
        PULL_ALL_SCHEDULER_ID,
        { every: this.config.PULL_INTERVAL_MS },
        { name: JOB, data: {}, opts },
      );
    this.logger.info({ everyMs: this.config.PULL_INTERVAL_MS }, 'pull of every connection scheduled');
  }
}
