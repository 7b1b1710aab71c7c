import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { ROOT_LOGGER } from '../infra/connections';
import type { JobName } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';
import { RetentionService } from './retention.service';

const JOB: JobName = 'log.retention';
/** The scheduler id; one per job, so every worker process upserts the same one. */
export const RETENTION_SCHEDULER_ID = JOB;

/**
 * Keeps a BullMQ job scheduler running log.retention every RETENTION_INTERVAL_MS. Upserting
 * is idempotent, so N worker processes leave one scheduler; with retention off the
 * scheduler is removed, so turning it off in one deploy stops it everywhere.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap {
  private readonly logger: Logger;

  constructor(
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(RetentionService) private readonly retention: RetentionService,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: RetentionScheduler.name });
  }

  async onApplicationBootstrap(): Promise<void> {
    const queue = this.jobs.queueOf(JOB);
    if (!this.retention.enabled) {
      await queue.removeJobScheduler(RETENTION_SCHEDULER_ID);
      this.logger.info('log retention is off (LOG_RETENTION_HOURS=0); no retention schedule');
      return;
    }
    // Scheduled jobs get ids from BullMQ (scheduler id + time), not the map's deterministic one.
    const { jobId: _ignored, ...opts } = this.jobs.jobOptions(JOB, {});
    await queue.upsertJobScheduler(
      RETENTION_SCHEDULER_ID,
      { every: this.config.RETENTION_INTERVAL_MS },
      { name: JOB, data: {}, opts },
    );
    this.logger.info(
      { everyMs: this.config.RETENTION_INTERVAL_MS, retentionHours: this.config.LOG_RETENTION_HOURS },
      'log retention scheduled',
    );
  }
}
