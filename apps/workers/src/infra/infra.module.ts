import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, REDIS, ROOT_LOGGER } from './connections';

export interface InfraDependencies {
  config: WorkersConfig;
  pool: Pool;
  redis: Redis;
  logger: Logger;
}

/**
 * Config, connections and the root logger, made before Nest starts (so a bad setting or an
 * unreachable dependency stops the process with one clear message) and closed after it stops.
 */
@Global()
@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static forRoot
export class InfraModule {
  static forRoot(deps: InfraDependencies): DynamicModule {
    const providers = [
      { provide: WORKERS_CONFIG, useValue: deps.config },
      { provide: PG_POOL, useValue: deps.pool },
      { provide: REDIS, useValue: deps.redis },
      { provide: ROOT_LOGGER, useValue: deps.logger },
    ];
    return { module: InfraModule, providers, exports: providers.map((p) => p.provide) };
  }
}
