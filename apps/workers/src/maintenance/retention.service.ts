import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { enforceRetention } from '@syncline/log';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';

const HOUR_MS = 3_600_000;

export type RetentionOutcome =
  | { skipped: true }
  | { skipped: false; deleted: number; heldBackByGroups: number; retentionHours: number };

/** Trims the change log to LOG_RETENTION_HOURS, never past an event a consumer group still needs. */
@Injectable()
export class RetentionService {
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: RetentionService.name });
  }

  get enabled(): boolean {
    return this.config.LOG_RETENTION_HOURS > 0;
  }

  async enforce(now: Date = new Date()): Promise<RetentionOutcome> {
    // A job enqueued by hand, or left over from before retention was turned off, must not delete.
    if (!this.enabled) {
      this.logger.info('log retention is off (LOG_RETENTION_HOURS=0); nothing deleted');
      return { skipped: true };
    }
    const retentionHours = this.config.LOG_RETENTION_HOURS;
    const result = await enforceRetention(this.pool, { retentionMs: retentionHours * HOUR_MS, now });
    // Events past retention that a group has not consumed mean a stuck or abandoned group.
    const level = result.heldBackByGroups > 0 ? 'warn' : 'info';
    this.logger[level]({ ...result, retentionHours }, 'log retention enforced');
    return { skipped: false, ...result, retentionHours };
  }
}
