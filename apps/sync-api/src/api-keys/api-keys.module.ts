import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ApiKeyCache } from './api-key-cache';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';

@Module({
  imports: [AuditLogModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeysRepository, ApiKeyCache],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
