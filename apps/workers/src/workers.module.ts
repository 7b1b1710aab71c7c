import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { ConnectionsModule } from './connections/connections.module';
import { DryRunModule } from './dry-run/dry-run.module';
import { HealthHistoryModule } from './health-history/health-history.module';
import { type InfraDependencies, InfraModule } from './infra/infra.module';
import type { JobMap } from './jobs/job-map';
import { JobsModule } from './jobs/jobs.module';
import { MaintenanceModule } from './maintenance/maintenance.module';
import { MetricsModule } from './metrics/metrics.module';
import { PullModule } from './pull/pull.module';
import { RenewModule } from './renew/renew.module';
import { ReplayModule } from './replay/replay.module';
import { SyncModule } from './sync/sync.module';

export interface WorkersModuleOptions extends InfraDependencies {
  jobMap: JobMap;
  /** More providers for the root module (tests add handlers for an extended map). */
  providers?: Provider[];
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static forRoot
export class WorkersModule {
  static forRoot(options: WorkersModuleOptions): DynamicModule {
    const { jobMap, providers = [], ...infra } = options;
    return {
      module: WorkersModule,
      imports: [
        InfraModule.forRoot(infra),
        // One shared connection for every queue; workers duplicate it for their blocking reads.
        BullModule.forRoot({ connection: infra.redis, prefix: infra.config.REDIS_PREFIX }),
        JobsModule.forRoot(jobMap),
        MaintenanceModule,
        HealthHistoryModule,
        MetricsModule,
        ConnectionsModule,
        PullModule,
        RenewModule,
        SyncModule,
        ReplayModule,
        DryRunModule,
      ],
      providers,
    };
  }
}
