import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ChangeLog, StagingChangeLog, withGenericPlans } from '@syncline/log';
import { PinoLogger } from 'nestjs-pino';
import { Pool } from 'pg';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LOG_POOL } from './log-pool';
import { OwnConnections } from './own-connection';

export { LOG_POOL } from './log-pool';

/**
 * The app's one ChangeLog (webhooks append to it), on a small pg pool of its own: the log
 * batches through `pg` directly, not through Prisma. Closed on shutdown after it has
 * flushed what is queued, so an answered webhook is never lost. Changes of a connection in
 * dry run are staged instead (StagingChangeLog, injectable by that class too for the enable).
 */
@Global()
@Module({
  providers: [
    {
      provide: LOG_POOL,
      inject: [APP_CONFIG, PinoLogger],
      useFactory: (config: AppConfig, logger: PinoLogger) => {
        logger.setContext('ChangeLogPool');
        const pool = new Pool(
          withGenericPlans({ connectionString: config.DATABASE_URL, max: 4, connectionTimeoutMillis: 5_000 }),
        );
        // An idle client losing its connection emits on the pool; unhandled it would crash the process.
        pool.on('error', (error) => logger.warn({ err: error }, 'idle postgres connection failed'));
        return pool;
      },
    },
    {
      provide: ChangeLog,
      inject: [LOG_POOL, APP_CONFIG],
      useFactory: async (pool: Pool, config: AppConfig) => {
        const log = new StagingChangeLog(pool, { partitions: config.LOG_PARTITIONS });
        await log.init();
        return log;
      },
    },
    { provide: StagingChangeLog, useExisting: ChangeLog },
    OwnConnections,
  ],
  exports: [ChangeLog, StagingChangeLog, LOG_POOL, OwnConnections],
})
export class ChangeLogModule implements OnApplicationShutdown {
  constructor(
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(LOG_POOL) private readonly pool: Pool,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.log.close();
    await this.pool.end();
  }
}
