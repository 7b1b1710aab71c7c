import { Module } from '@nestjs/common';
import { MembersModule } from '../members/members.module';
import { MagicLinkLimiter } from './magic-links/magic-link-limiter';
import { MagicLinksModule } from './magic-links/magic-links.service';
import { SessionsModule } from './sessions/sessions.module';
import { SignInController } from './sign-in.controller';

@Module({
  imports: [SessionsModule, MembersModule, MagicLinksModule],
  controllers: [SignInController],
  providers: [MagicLinkLimiter],
})
export class SignInModule {}
