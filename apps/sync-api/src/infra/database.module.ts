import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createPrismaClient, PrismaClient } from '@syncline/core/db';
import { PinoLogger } from 'nestjs-pino';
import { Pool } from 'pg';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/**
 * Injection token for the pg pool of the hot reads (API-key lookup, record reads): a query
 * through `pg` costs about a quarter of the same query through Prisma's client here, and
 * these run on every request (bench api-read).
 */
export const READ_POOL = Symbol('READ_POOL');

/** One Prisma client for the process, injected by its class, and the pg pool of the hot reads. */
@Global()
@Module({
  providers: [
    {
      provide: PrismaClient,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => createPrismaClient(config.DATABASE_URL),
    },
    {
      provide: READ_POOL,
      inject: [APP_CONFIG, PinoLogger],
      useFactory: (config: AppConfig, logger: PinoLogger) => {
        logger.setContext('ReadPool');
        const pool = new Pool({
          connectionString: config.DATABASE_URL,
          max: 10,
          connectionTimeoutMillis: 5_000,
        });
        // An idle client losing its connection emits on the pool; unhandled it would crash the process.
        pool.on('error', (error) => logger.warn({ err: error }, 'idle postgres connection failed'));
        return pool;
      },
    },
  ],
  exports: [PrismaClient, READ_POOL],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(READ_POOL) private readonly pool: Pool,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.prisma.$disconnect(), this.pool.end()]);
  }
}
