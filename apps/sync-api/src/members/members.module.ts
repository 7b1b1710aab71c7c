import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ActorLabelsModule } from '../auth/actor-labels';
import { MagicLinksModule } from '../auth/magic-links/magic-links.service';
import { SessionsModule } from '../auth/sessions/sessions.module';
import { MembersController } from './members.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [SessionsModule, MagicLinksModule, ActorLabelsModule, AuditLogModule],
  controllers: [MembersController],
  providers: [MembersService, MembersRepository],
  exports: [MembersService],
})
export class MembersModule {}
