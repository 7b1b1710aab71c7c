import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import type { JobName } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';

const JOB: JobName = 'health.sample';
/** The scheduler id; one per job, so every worker process upserts the same one. */
export const HEALTH_SAMPLE_SCHEDULER_ID = JOB;

/**
 * Keeps a BullMQ job scheduler running health.sample every HEALTH_SAMPLE_INTERVAL_MS. Upserting
 * is idempotent, so N worker processes leave one scheduler and one job per interval.
 */
@Injectable()
export class HealthSamplerScheduler implements OnApplicationBootstrap {
  constructor(
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Scheduled jobs get ids from BullMQ (scheduler id + time), not the map's deterministic one.
    const { jobId: _ignored, ...opts } = this.jobs.jobOptions(JOB, {});
    await this.jobs
      .queueOf(JOB)
      .upsertJobScheduler(
        HEALTH_SAMPLE_SCHEDULER_ID,
        { every: this.config.HEALTH_SAMPLE_INTERVAL_MS },
        { name: JOB, data: {}, opts },
      );
  }
}
