import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ActorLabelsModule } from '../auth/actor-labels';
import { ReplayQueue } from './replay-queue';
import { ReplaysController } from './replays.controller';
import { ReplaysRepository } from './replays.repository';
import { ReplaysService } from './replays.service';

/** Admin routes of replays (POST/GET /api/v1/replays); the workers run them. */
@Module({
  imports: [AuditLogModule, ActorLabelsModule],
  controllers: [ReplaysController],
  providers: [ReplaysService, ReplaysRepository, ReplayQueue],
})
export class ReplaysModule {}
