import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { TimeZoneController } from './time-zone.controller';
import { TimeZoneRepository } from './time-zone.repository';
import { TimeZoneService } from './time-zone.service';

/** The workspace's own settings: its time zone. */
@Module({
  imports: [AuditLogModule],
  controllers: [TimeZoneController],
  providers: [TimeZoneService, TimeZoneRepository],
})
export class WorkspaceSettingsModule {}
