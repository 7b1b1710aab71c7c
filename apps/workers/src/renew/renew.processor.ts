import { Inject, Injectable } from '@nestjs/common';
import { JobHandler } from '../jobs/job-handler.decorator';
import { type RenewOutcome, RenewService } from './renew.service';

@Injectable()
export class RenewProcessor {
  constructor(@Inject(RenewService) private readonly renewals: RenewService) {}

  @JobHandler('connection.renew')
  run(): Promise<RenewOutcome> {
    return this.renewals.renewAll();
  }
}
