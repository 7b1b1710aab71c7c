import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { isTransient } from '@syncline/log';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { PushService } from '../sync/push.service';
import {
  applyReplay,
  previewReplay,
  type ReplayFrom,
  ReplayRefused,
  type ReplayReport,
} from './replay-rebuild';

export interface ReplayOutcome {
  status: 'succeeded' | 'failed' | 'skipped';
  reason?: string;
}

/** Progress is written at most this often (and once at the end). */
const PROGRESS_EVERY_MS = 250;

/**
 * Runs one replay row: queued → running → succeeded | failed (with its reason). A preview's
 * report is stored in a short transaction of its own; an apply is marked succeeded inside its
 * rebuild transaction, so a retried job (a crash, a stalled worker) finds it succeeded and
 * does nothing, or finds nothing applied and runs it again.
 */
@Injectable()
export class ReplayService {
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(PushService) private readonly push: PushService,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: ReplayService.name });
  }

  async run(replayId: string, options: { lastAttempt?: boolean } = {}): Promise<ReplayOutcome> {
    const { rows } = await this.pool.query<{
      workspace_id: string;
      mode: string;
      from_event_time: Date | null;
    }>(
      `UPDATE replay SET status = 'running', started_at = COALESCE(started_at, now()), attempts = attempts + 1
        WHERE id = $1 AND status IN ('queued', 'running')
       RETURNING workspace_id::text AS workspace_id, mode, from_event_time`,
      [replayId],
    );
    const row = rows[0];
    if (row === undefined) return { status: 'skipped', reason: 'not queued or running (done already)' };
    const from: ReplayFrom = row.from_event_time === null ? 'beginning' : { eventTime: row.from_event_time };
    const log = { replayId, workspaceId: row.workspace_id, mode: row.mode };
    this.logger.info(log, 'replay started');
    const replayOptions = { onProgress: this.progress(replayId) };
    try {
      if (row.mode === 'apply') {
        const report = await applyReplay(this.pool, row.workspace_id, from, {
          ...replayOptions,
          beforeCommit: (client, report) => this.succeeded(client, replayId, report),
        });
        // Pushes go out after the commit, for the final values the rebuild left owed.
        for (const connectionId of await this.owing(row.workspace_id)) await this.push.schedule(connectionId);
        this.logger.info({ ...log, ...report.summary }, 'replay applied');
      } else {
        const report = await previewReplay(this.pool, row.workspace_id, from, replayOptions);
        await this.succeeded(this.pool, replayId, report);
        this.logger.info({ ...log, ...report.summary }, 'replay previewed');
      }
      return { status: 'succeeded' };
    } catch (error) {
      // A deadlock or serialization failure is the moment's, not the replay's: the job retries.
      if (isTransient(error) && !options.lastAttempt) throw error;
      const reason =
        error instanceof ReplayRefused
          ? error.message
          : `${error instanceof Error ? error.message : String(error)}`.slice(0, 2_000);
      await this.pool.query(
        `UPDATE replay SET status = 'failed', failure_reason = $2, finished_at = now()
          WHERE id = $1 AND status = 'running'`,
        [replayId, reason],
      );
      this.logger.warn({ ...log, reason }, 'replay failed');
      return { status: 'failed', reason };
    }
  }

  private async succeeded(db: Pool | PoolClient, replayId: string, report: ReplayReport): Promise<void> {
    const { rowCount } = await db.query(
      `UPDATE replay SET status = 'succeeded', report = $2, events_total = $3, events_replayed = $3,
              finished_at = now()
        WHERE id = $1 AND status = 'running'`,
      [replayId, JSON.stringify(report), report.scope.events],
    );
    // Another run of the same replay finished first: this one must not commit a second apply.
    if (rowCount === 0) throw new Error(`replay ${replayId} is no longer running`);
  }

  private progress(replayId: string): (replayed: number, total: number) => Promise<void> {
    let last = 0;
    return async (replayed, total) => {
      const now = Date.now();
      if (replayed !== 0 && replayed < total && now - last < PROGRESS_EVERY_MS) return;
      last = now;
      await this.pool.query(
        `UPDATE replay SET events_total = $2, events_replayed = $3 WHERE id = $1 AND status = 'running'`,
        [replayId, total, replayed],
      );
    };
  }

  private async owing(workspaceId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ connection_id: string }>(
      `SELECT DISTINCT connection_id::text AS connection_id FROM outbox WHERE workspace_id = $1 AND status = 'pending'`,
      [workspaceId],
    );
    return rows.map((r) => r.connection_id);
  }
}
