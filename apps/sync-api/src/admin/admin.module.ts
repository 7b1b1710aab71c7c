import { Module } from '@nestjs/common';
import { AuditLogController } from './audit-log.controller';
import { AuditLogModule } from './audit-log.module';
import { DeadLettersController } from './dead-letters.controller';
import { DeadLettersRepository } from './dead-letters.repository';
import { DeadLettersService } from './dead-letters.service';
import { SyncHealthController } from './sync-health.controller';
import { SyncHealthRepository } from './sync-health.repository';
import { SyncHealthService } from './sync-health.service';

/** Admin-only routes: dead letters, sync health and the audit log. */
@Module({
  imports: [AuditLogModule],
  controllers: [DeadLettersController, SyncHealthController, AuditLogController],
  providers: [DeadLettersService, DeadLettersRepository, SyncHealthService, SyncHealthRepository],
  exports: [AuditLogModule],
})
export class AdminModule {}
