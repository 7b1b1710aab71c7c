import { Module } from '@nestjs/common';
import { HealthSamplerProcessor } from './health-sampler.processor';
import { HealthSamplerScheduler } from './health-sampler.scheduler';
import { HealthSamplerService } from './health-sampler.service';

/** The sync health history: samples written every interval and trimmed to their retention. */
@Module({
  providers: [HealthSamplerService, HealthSamplerProcessor, HealthSamplerScheduler],
})
export class HealthHistoryModule {}
