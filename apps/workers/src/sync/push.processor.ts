import { Inject, Injectable } from '@nestjs/common';
import { JobHandler } from '../jobs/job-handler.decorator';
import type { JobData } from '../jobs/job-map';
import { type PushOutcome, PushService } from './push.service';

@Injectable()
export class PushProcessor {
  constructor(@Inject(PushService) private readonly push: PushService) {}

  @JobHandler('connection.push')
  run(payload: JobData<'connection.push'>): Promise<PushOutcome> {
    return this.push.push(payload.connectionId);
  }

  @JobHandler('outbox.sweep')
  async sweep(): Promise<{ connections: number }> {
    return { connections: await this.push.sweep() };
  }
}
