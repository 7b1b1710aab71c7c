import { Inject, Injectable } from '@nestjs/common';
import { JobHandler } from '../jobs/job-handler.decorator';
import { type RetentionOutcome, RetentionService } from './retention.service';

@Injectable()
export class RetentionProcessor {
  constructor(@Inject(RetentionService) private readonly retention: RetentionService) {}

  @JobHandler('log.retention')
  run(): Promise<RetentionOutcome> {
    return this.retention.enforce();
  }
}
