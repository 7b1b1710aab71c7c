import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Result } from '@syncline/core';
import {
  type AppendError,
  type AppendedChange,
  StagingChangeLog,
  type TransactionQuery,
} from '@syncline/log';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL } from '../infra/connections';

/**
 * The process's one ChangeLog for ingest (its micro-batcher is shared by every pull job).
 * Changes of a connection in dry run are staged instead (see StagingChangeLog).
 * The log's partition heads are created on the first append, not at boot, so a process
 * that never ingests leaves the log untouched.
 */
@Injectable()
export class IngestLog implements OnApplicationShutdown {
  private readonly log: StagingChangeLog;
  private ready: Promise<void> | undefined;

  constructor(@Inject(PG_POOL) pool: Pool, @Inject(WORKERS_CONFIG) config: WorkersConfig) {
    this.log = new StagingChangeLog(pool, { partitions: config.LOG_PARTITIONS });
  }

  async append(changes: readonly unknown[]): Promise<Result<AppendedChange[], AppendError>> {
    return (await this.opened()).append(changes);
  }

  /**
   * Appends in the caller's transaction (ChangeLog.appendWithin), past the micro-batcher: the
   * push stage's claims and receipts, which must be on the log before a send, or commit with
   * the rows they mark sent. Never staged: a connection in dry run is written nothing.
   */
  async appendWithin(
    query: TransactionQuery,
    changes: readonly unknown[],
  ): Promise<Result<AppendedChange[], AppendError>> {
    return (await this.opened()).appendWithin(query, changes);
  }

  /** The log, its partition heads made on first use (a failed attempt is tried again next time). */
  private async opened(): Promise<StagingChangeLog> {
    this.ready ??= this.log.init().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    await this.ready;
    return this.log;
  }

  /** Runs after the job workers finished their jobs (beforeApplicationShutdown), before the pool closes. */
  async onApplicationShutdown(): Promise<void> {
    await this.log.close();
  }
}
