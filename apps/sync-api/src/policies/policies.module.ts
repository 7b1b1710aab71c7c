import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ActorLabelsModule } from '../auth/actor-labels';
import { PoliciesController } from './policies.controller';
import { PoliciesRepository } from './policies.repository';
import { PoliciesService } from './policies.service';

@Module({
  imports: [AuditLogModule, ActorLabelsModule],
  controllers: [PoliciesController],
  providers: [PoliciesService, PoliciesRepository],
})
export class PoliciesModule {}
