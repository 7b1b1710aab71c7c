import { Inject, Injectable } from '@nestjs/common';
import type { JobData } from '@syncline/jobs';
import type { JobContext } from '../jobs/job-handler.decorator';
import { JobHandler } from '../jobs/job-handler.decorator';
import { type PullOutcome, PullService } from './pull.service';

@Injectable()
export class PullProcessor {
  constructor(@Inject(PullService) private readonly pulls: PullService) {}

  @JobHandler('connection.pull')
  run(payload: JobData<'connection.pull'>, context: JobContext): Promise<PullOutcome> {
    return this.pulls.pull(payload.connectionId, context.jobId, payload.reason);
  }

  @JobHandler('connection.pull-all')
  async runAll(): Promise<{ enqueued: number }> {
    return { enqueued: await this.pulls.enqueueAll() };
  }
}
