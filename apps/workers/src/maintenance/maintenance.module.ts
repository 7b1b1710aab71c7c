import { Module } from '@nestjs/common';
import { RetentionProcessor } from './retention.processor';
import { RetentionScheduler } from './retention.scheduler';
import { RetentionService } from './retention.service';
import { TableStatisticsService } from './table-statistics.service';

/** Housekeeping: jobs on the `maintenance` queue, and the planner statistics' upkeep. */
@Module({
  providers: [RetentionService, RetentionProcessor, RetentionScheduler, TableStatisticsService],
})
export class MaintenanceModule {}
