import { Module } from '@nestjs/common';
import { ActorLabelsModule } from '../auth/actor-labels';
import { AuditLogRepository } from './audit-log.repository';
import { AuditLogService } from './audit-log.service';

/**
 * The audit log on its own, so that a module whose actions are audited (connections) can
 * import it without the admin routes.
 */
@Module({
  imports: [ActorLabelsModule],
  providers: [AuditLogService, AuditLogRepository],
  exports: [AuditLogService],
})
export class AuditLogModule {}
