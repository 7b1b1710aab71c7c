import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { ApiKeyGuard } from './api-key.guard';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { MeController } from './me.controller';
import { RequestLimiter } from './request-limiter';

@Module({
  imports: [ApiKeysModule],
  controllers: [MeController],
  providers: [RequestLimiter, AuthFailureLimiter, { provide: APP_GUARD, useClass: ApiKeyGuard }],
})
export class AuthModule {}
