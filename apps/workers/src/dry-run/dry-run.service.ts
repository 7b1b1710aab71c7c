import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@syncline/core';
import { DRY_RUN_REPORT_LIMIT } from '@syncline/jobs';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { computeDryRunReport, DryRunConnectionMissing, type DryRunReport } from './dry-run-report';

export type DryRunOutcome =
  | { status: 'stored'; stagedUpTo: string; complete: boolean }
  /** A report of a later point of the backfill was stored meanwhile: this one is dropped. */
  | { status: 'superseded'; stagedUpTo: string }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string };

/**
 * Computes a connection's dry-run report and stores it in dry_run_report, where the API
 * reads it. A report never replaces one of a later point of the backfill (two jobs of
 * different points may overlap). Lists are kept at DRY_RUN_REPORT_LIMIT; the API cuts them
 * to what a request asks for.
 */
export async function storeDryRunReport(
  pool: Pool,
  connectionId: string,
  options: { partitions: number },
): Promise<DryRunOutcome> {
  const { rows } = await pool.query<{ dry_run: boolean; status: string }>(
    'SELECT dry_run, status::text AS status FROM connection WHERE id = $1',
    [connectionId],
  );
  const connection = rows[0];
  if (connection === undefined) return { status: 'skipped', reason: 'no such connection' };
  if (!connection.dry_run) return { status: 'skipped', reason: 'not in dry run' };
  if (connection.status === 'disconnected') return { status: 'skipped', reason: 'disconnected' };
  let report: DryRunReport;
  try {
    report = await computeDryRunReport(pool, connectionId, {
      partitions: options.partitions,
      limit: DRY_RUN_REPORT_LIMIT,
    });
  } catch (error) {
    if (error instanceof DryRunConnectionMissing) return { status: 'skipped', reason: 'no such connection' };
    throw error;
  }
  const { rowCount } = await pool.query(
    `INSERT INTO dry_run_report (connection_id, workspace_id, staged_up_to, complete, report, computed_at)
     VALUES ($1, $2, $3::bigint, $4, $5::jsonb, $6::timestamptz)
     ON CONFLICT (connection_id) DO UPDATE
        SET staged_up_to = EXCLUDED.staged_up_to, complete = EXCLUDED.complete, report = EXCLUDED.report,
            computed_at = EXCLUDED.computed_at, failure_reason = NULL, failed_at = NULL
      WHERE dry_run_report.staged_up_to IS NULL OR dry_run_report.staged_up_to <= EXCLUDED.staged_up_to`,
    [
      connectionId,
      report.workspaceId,
      report.stagedUpTo,
      report.complete,
      JSON.stringify(report),
      report.computedAt,
    ],
  );
  if (rowCount === 0) return { status: 'superseded', stagedUpTo: report.stagedUpTo };
  return { status: 'stored', stagedUpTo: report.stagedUpTo, complete: report.complete };
}

/** A computation that failed for good: the API answers its reason instead of waiting; a report before it stays. */
export async function recordDryRunFailure(pool: Pool, connectionId: string, reason: string): Promise<void> {
  await pool.query(
    `INSERT INTO dry_run_report (connection_id, workspace_id, failure_reason, failed_at)
     SELECT id, workspace_id, $2, now() FROM connection WHERE id = $1
     ON CONFLICT (connection_id) DO UPDATE SET failure_reason = EXCLUDED.failure_reason, failed_at = EXCLUDED.failed_at`,
    [connectionId, reason],
  );
}

/** Runs the `connection.dry-run` job. */
@Injectable()
export class DryRunService {
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: DryRunService.name });
  }

  async run(connectionId: string, options: { lastAttempt: boolean }): Promise<DryRunOutcome> {
    const started = Date.now();
    try {
      const outcome = await storeDryRunReport(this.pool, connectionId, {
        partitions: this.config.LOG_PARTITIONS,
      });
      this.logger.info({ connectionId, ms: Date.now() - started, ...outcome }, 'dry run computed');
      return outcome;
    } catch (error) {
      // The job retries while it has attempts; the last one leaves the reason for the API.
      if (!options.lastAttempt) throw error;
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, 2_000);
      await recordDryRunFailure(this.pool, connectionId, reason);
      this.logger.warn({ connectionId, reason }, 'dry run failed');
      return { status: 'failed', reason };
    }
  }
}
