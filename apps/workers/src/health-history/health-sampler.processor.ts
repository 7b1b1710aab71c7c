import { Inject, Injectable } from '@nestjs/common';
import { JobHandler } from '../jobs/job-handler.decorator';
import { HealthSamplerService, type SampleOutcome } from './health-sampler.service';

@Injectable()
export class HealthSamplerProcessor {
  constructor(@Inject(HealthSamplerService) private readonly sampler: HealthSamplerService) {}

  @JobHandler('health.sample')
  run(): Promise<SampleOutcome> {
    return this.sampler.sample();
  }
}
