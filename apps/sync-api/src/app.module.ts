import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AdminModule } from './admin/admin.module';
import { QueueDashboardModule } from './admin/queue-dashboard.module';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AuthModule } from './auth/auth.module';
import { OidcModule } from './auth/oidc/oidc.module';
import { SignInModule } from './auth/sign-in.module';
import { ApiExceptionFilter } from './common/api-exception.filter';
import { ZodValidationPipe } from './common/zod-validation.pipe';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { ConnectionsModule } from './connections/connections.module';
import { HealthModule } from './health/health.module';
import { IdentityReviewModule } from './identity-review/identity-review.module';
import { ChangeLogModule } from './infra/change-log.module';
import { DatabaseModule } from './infra/database.module';
import { loggerParams } from './infra/logger-params';
import { PgListenerModule } from './infra/pg-listener';
import { PullQueueModule } from './infra/pull-queue.module';
import { RedisModule } from './infra/redis.module';
import { MembersModule } from './members/members.module';
import { MetricsModule } from './metrics/metrics.module';
import { PoliciesModule } from './policies/policies.module';
import { RecordsModule } from './records/records.module';
import { ReplaysModule } from './replays/replays.module';
import { StreamModule } from './stream/stream.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { WorkspaceSettingsModule } from './workspace-settings/workspace-settings.module';

export interface AppOptions {
  /** Where log lines go; stdout when absent. Tests pass a stream to read them. */
  logDestination?: DestinationStream;
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static forRoot
export class AppModule {
  static forRoot(config: AppConfig, options: AppOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerParams(config, options.logDestination)),
        DatabaseModule,
        PgListenerModule,
        RedisModule,
        ChangeLogModule,
        PullQueueModule,
        HealthModule,
        MetricsModule,
        AuthModule,
        ApiKeysModule,
        MembersModule,
        SignInModule,
        OidcModule,
        ConnectionsModule,
        RecordsModule,
        IdentityReviewModule,
        StreamModule,
        WebhooksModule,
        AdminModule,
        QueueDashboardModule,
        PoliciesModule,
        ReplaysModule,
        WorkspaceSettingsModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_PIPE, useClass: ZodValidationPipe },
      ],
    };
  }
}
