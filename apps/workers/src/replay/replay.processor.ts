import { Inject, Injectable } from '@nestjs/common';
import { type JobContext, JobHandler } from '../jobs/job-handler.decorator';
import { JOBS, type JobData, QUEUES } from '../jobs/job-map';
import { type ReplayOutcome, ReplayService } from './replay.service';

@Injectable()
export class ReplayProcessor {
  constructor(@Inject(ReplayService) private readonly replays: ReplayService) {}

  @JobHandler('workspace.replay')
  run(payload: JobData<'workspace.replay'>, context: JobContext): Promise<ReplayOutcome> {
    const attempts = JOBS['workspace.replay'].attempts ?? QUEUES.replay.attempts;
    return this.replays.run(payload.replayId, { lastAttempt: context.attempt >= attempts });
  }
}
