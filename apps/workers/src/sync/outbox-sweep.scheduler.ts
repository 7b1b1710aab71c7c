import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { JobName } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';

const JOB: JobName = 'outbox.sweep';
export const OUTBOX_SWEEP_SCHEDULER_ID = JOB;
const EVERY_MS = 5_000;

/**
 * Runs outbox.sweep every few seconds: rows whose push job was lost (a process killed
 * between its commit and the enqueue, a job dead-lettered after its retries, a connection
 * back from needs_reauth) are pushed again.
 */
@Injectable()
export class OutboxSweepScheduler implements OnApplicationBootstrap {
  constructor(@Inject(JobQueue) private readonly jobs: JobQueue) {}

  async onApplicationBootstrap(): Promise<void> {
    const { jobId: _ignored, ...opts } = this.jobs.jobOptions(JOB, {});
    await this.jobs
      .queueOf(JOB)
      .upsertJobScheduler(OUTBOX_SWEEP_SCHEDULER_ID, { every: EVERY_MS }, { name: JOB, data: {}, opts });
  }
}
