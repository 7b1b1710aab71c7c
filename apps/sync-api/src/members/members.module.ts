import { Module } from '@nestjs/common';
import { SessionsModule } from '../auth/sessions/sessions.module';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [SessionsModule],
  providers: [MembersService, MembersRepository],
  exports: [MembersService],
})
export class MembersModule {}
