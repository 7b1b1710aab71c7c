import { Inject, Injectable } from '@nestjs/common';
import { attemptsOf, JOB_MAP, type JobData } from '@syncline/jobs';
import { type JobContext, JobHandler } from '../jobs/job-handler.decorator';
import { type ReplayOutcome, ReplayService } from './replay.service';

@Injectable()
export class ReplayProcessor {
  constructor(@Inject(ReplayService) private readonly replays: ReplayService) {}

  @JobHandler('workspace.replay')
  run(payload: JobData<'workspace.replay'>, context: JobContext): Promise<ReplayOutcome> {
    const lastAttempt = context.attempt >= attemptsOf(JOB_MAP, 'workspace.replay');
    return this.replays.run(payload.replayId, { lastAttempt });
  }
}
