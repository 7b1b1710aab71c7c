import { Module } from '@nestjs/common';
import { RetentionProcessor } from './retention.processor';
import { RetentionScheduler } from './retention.scheduler';
import { RetentionService } from './retention.service';

/** Housekeeping jobs on the `maintenance` queue. */
@Module({
  providers: [RetentionService, RetentionProcessor, RetentionScheduler],
})
export class MaintenanceModule {}
