import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { AuthGuard } from './auth.guard';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { MeController } from './me.controller';
import { RequestLimiter } from './request-limiter';
import { SessionsModule } from './sessions/sessions.module';

@Module({
  imports: [ApiKeysModule, SessionsModule],
  controllers: [MeController],
  providers: [RequestLimiter, AuthFailureLimiter, { provide: APP_GUARD, useClass: AuthGuard }],
})
export class AuthModule {}
