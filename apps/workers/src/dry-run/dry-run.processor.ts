import { Inject, Injectable } from '@nestjs/common';
import { attemptsOf, JOB_MAP, type JobData } from '@syncline/jobs';
import { type JobContext, JobHandler } from '../jobs/job-handler.decorator';
import { type DryRunOutcome, DryRunService } from './dry-run.service';

@Injectable()
export class DryRunProcessor {
  constructor(@Inject(DryRunService) private readonly dryRuns: DryRunService) {}

  @JobHandler('connection.dry-run')
  run(payload: JobData<'connection.dry-run'>, context: JobContext): Promise<DryRunOutcome> {
    const lastAttempt = context.attempt >= attemptsOf(JOB_MAP, 'connection.dry-run');
    return this.dryRuns.run(payload.connectionId, { lastAttempt });
  }
}
