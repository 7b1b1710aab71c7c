import 'reflect-metadata';
import type { INestApplicationContext, Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createLogger, type DestinationStream, type Logger } from '@syncline/core';
import type { WorkersConfig } from './config/workers-config';
import { connectPostgres, connectRedis, describeUrl } from './infra/connections';
import { JOB_MAP, type JobMap } from './jobs/job-map';
import { JobQueue } from './jobs/job-queue.service';
import { jobLogMixin } from './logging/job-log-context';
import { PinoNestLogger } from './logging/pino-nest-logger';
import { WorkersModule } from './workers.module';

export interface CreateWorkersOptions {
  /** Defaults to the production JOB_MAP. */
  jobMap?: JobMap;
  /** Extra providers, e.g. handlers for jobs of an extended map. */
  providers?: Provider[];
  /** Defaults to a pino logger at LOG_LEVEL with the core redaction paths. */
  logger?: Logger;
}

export interface Workers {
  readonly app: INestApplicationContext;
  readonly jobs: JobQueue;
  /** Stops taking jobs, waits for running ones, then closes queues, Redis and Postgres. */
  close(): Promise<void>;
}

/** The workers' logger; `destination` (stdout by default) is for tests that read the lines. */
export function createWorkersLogger(config: WorkersConfig, destination?: DestinationStream): Logger {
  return createLogger({ level: config.LOG_LEVEL, name: 'workers', mixin: jobLogMixin }, destination);
}

/**
 * Boots the workers: checks Postgres and Redis first (a clear StartupError if either is
 * away), then starts Nest, which refuses to start unless every job has exactly one handler.
 */
export async function createWorkers(
  config: WorkersConfig,
  options: CreateWorkersOptions = {},
): Promise<Workers> {
  const logger = options.logger ?? createWorkersLogger(config);
  const pool = await connectPostgres(config.DATABASE_URL, logger);
  const redis = await connectRedis(config.REDIS_URL, logger).catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  const releaseConnections = async (): Promise<void> => {
    await redis.quit().catch(() => redis.disconnect());
    await pool.end();
  };

  let app: INestApplicationContext;
  try {
    app = await NestFactory.createApplicationContext(
      WorkersModule.forRoot({
        config,
        pool,
        redis,
        logger,
        jobMap: options.jobMap ?? JOB_MAP,
        providers: options.providers ?? [],
      }),
      // Throw instead of process.abort(): the caller (main or a test) decides what happens.
      { logger: new PinoNestLogger(logger), abortOnError: false },
    );
  } catch (error) {
    await releaseConnections();
    throw error;
  }
  logger.info(
    {
      postgres: describeUrl(config.DATABASE_URL),
      redis: describeUrl(config.REDIS_URL),
      prefix: config.REDIS_PREFIX,
    },
    'workers started',
  );

  let closing: Promise<void> | undefined;
  return {
    app,
    jobs: app.get(JobQueue),
    close: () => {
      closing ??= (async () => {
        await app.close();
        await releaseConnections();
        logger.info('workers stopped');
      })();
      return closing;
    },
  };
}
