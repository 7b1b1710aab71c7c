import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { KeyringModule } from '../infra/keyring.module';
import { ConnectionsController } from './connections.controller';
import { ConnectionsRepository } from './connections.repository';
import { ConnectionsService } from './connections.service';

@Module({
  imports: [KeyringModule, AuditLogModule],
  controllers: [ConnectionsController],
  providers: [ConnectionsService, ConnectionsRepository],
})
export class ConnectionsModule {}
