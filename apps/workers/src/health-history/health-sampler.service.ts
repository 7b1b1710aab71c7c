import { Inject, Injectable } from '@nestjs/common';
import { CONNECTION_HEALTH_SQL, inTransaction, type Logger, PROVIDER_KEYS } from '@syncline/core';
import type { Pool, PoolClient } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { SYNC_GROUP } from '../sync/sync-group';

const HOUR_MS = 3_600_000;
/** Advisory lock class of a sampled interval (see the other 0x5e4x classes of the workers). */
const SAMPLE_LOCK_CLASS = 0x5e53;

export interface SampleOutcome {
  /** Start of the interval sampled (the samples' `sampled_at`). */
  sampledAt: Date;
  workspaces: number;
  /** Rows written; 0 when another sampler already took this interval. */
  written: number;
  /** Samples deleted for being older than HEALTH_HISTORY_RETENTION_HOURS. */
  deleted: number;
}

/**
 * Writes every provider connection's health into sync_health_sample once per
 * HEALTH_SAMPLE_INTERVAL_MS: what `GET /health/sync` shows (the same SQL), plus the writes
 * sent and refused during the interval before, and the workspace's open dead letters and
 * consumer lag. A sample is keyed by the start of its interval, so a second sampler (another
 * process, a retried job) of the same interval writes nothing.
 */
@Injectable()
export class HealthSamplerService {
  private readonly logger: Logger;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: HealthSamplerService.name });
  }

  async sample(now: Date = new Date()): Promise<SampleOutcome> {
    const every = this.config.HEALTH_SAMPLE_INTERVAL_MS;
    const sampledAt = new Date(Math.floor(now.getTime() / every) * every);
    const windowStart = new Date(sampledAt.getTime() - every);
    const { rows: workspaces } = await this.pool.query<{ id: string }>(
      `SELECT DISTINCT workspace_id::text AS id FROM connection WHERE provider::text = ANY($1::text[])`,
      [[...PROVIDER_KEYS]],
    );
    // One sampler writes an interval, whole: two at once (another process, a retried job) would
    // each take the workspaces the other had not reached yet. The lock lasts the transaction.
    const written = await inTransaction(this.pool, async (client) => {
      const { rows: lock } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, $2) AS ok',
        [SAMPLE_LOCK_CLASS, Math.floor(sampledAt.getTime() / every) % 2 ** 31],
      );
      let rows = 0;
      if (lock[0]?.ok)
        for (const { id } of workspaces)
          rows += await this.sampleWorkspace(client, id, sampledAt, windowStart);
      return rows;
    });
    const deleted = await this.trim(now);
    this.logger.debug({ sampledAt, workspaces: workspaces.length, written, deleted }, 'sync health sampled');
    return { sampledAt, workspaces: workspaces.length, written, deleted };
  }

  /** Deletes samples older than HEALTH_HISTORY_RETENTION_HOURS (the BRIN index on time finds them). */
  async trim(now: Date = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.config.HEALTH_HISTORY_RETENTION_HOURS * HOUR_MS);
    const { rowCount } = await this.pool.query('DELETE FROM sync_health_sample WHERE sampled_at < $1', [
      before,
    ]);
    return rowCount ?? 0;
  }

  private async sampleWorkspace(
    client: PoolClient,
    workspaceId: string,
    sampledAt: Date,
    windowStart: Date,
  ): Promise<number> {
    // Writes sent: outbox rows marked sent in the window. Writes refused: the dead letters the
    // push stage wrote in the window, by error code. Both count the interval before sampledAt.
    const { rowCount } = await client.query(
      `WITH health AS (${CONNECTION_HEALTH_SQL}),
            refused AS (
              SELECT connection_id, jsonb_object_agg(error_code, n) AS codes
                FROM (SELECT d.connection_id, d.error_code, count(*)::int AS n
                        FROM dead_letter d
                       WHERE d.workspace_id = $1::uuid AND d.source = 'push'
                         AND d.created_at >= $5::timestamptz AND d.created_at < $4::timestamptz
                       GROUP BY d.connection_id, d.error_code) AS per_code
               GROUP BY connection_id),
            workspace AS (
              SELECT (SELECT count(*)::int FROM dead_letter d
                       WHERE d.workspace_id = $1::uuid AND d.status = 'open') AS dead_letters_open,
                     (SELECT count(*)::int
                        FROM log_partition h
                        LEFT JOIN consumer_offset o ON o.group_name = $3 AND o.partition = h.partition
                        JOIN change_event e ON e.partition = h.partition AND e."offset" > COALESCE(o.committed_offset, 0)
                       WHERE e.workspace_id = $1::uuid) AS consumer_lag)
       INSERT INTO sync_health_sample (workspace_id, sampled_at, connection_id, status, lag_events,
                                       watermark_delay_seconds, backfill_seen, backfill_total, pending_writes,
                                       writes_ok, writes_failed, dead_letters_open, consumer_lag)
       SELECT $1::uuid, $4::timestamptz, h.id::uuid, h.status, h."lagEvents",
              CASE WHEN h.watermark IS NULL THEN NULL
                   ELSE GREATEST(0, floor(EXTRACT(EPOCH FROM ($4::timestamptz - h.watermark))))::int END,
              h."backfillSeen", h."backfillTotal", h."pendingWrites",
              (SELECT count(*)::int FROM outbox w
                WHERE w.connection_id = h.id::uuid AND w.status = 'sent'
                  AND w.sent_at >= $5::timestamptz AND w.sent_at < $4::timestamptz),
              COALESCE(r.codes, '{}'::jsonb), ws.dead_letters_open, ws.consumer_lag
         FROM health h CROSS JOIN workspace ws
         LEFT JOIN refused r ON r.connection_id = h.id::uuid
       ON CONFLICT (workspace_id, sampled_at, connection_id) DO NOTHING`,
      [workspaceId, [...PROVIDER_KEYS], SYNC_GROUP, sampledAt, windowStart],
    );
    return rowCount ?? 0;
  }
}
