import { Inject, Injectable } from '@nestjs/common';
import {
  CONNECTION_HEALTH_SQL,
  type ConnectionHealthRow,
  PROVIDER_KEYS,
  type WorkspaceId,
} from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import { SYNC_CONSUMER_GROUP } from '../connections/connections.repository';
import { DEFAULT_TIME_ZONE } from '../workspace-settings/time-zone.schemas';
import type {
  HistoryBucketRow,
  HistoryConnectionInfo,
  HistoryFailureRow,
  WorkspaceBucketRow,
} from './sync-health-history';

export interface HistoryRange {
  from: Date;
  to: Date;
  bucketSeconds: number;
  connectionId?: string;
}

export type ConnectionHealthRecord = ConnectionHealthRow;

export interface InsightsHealthRecord {
  completeUpTo: Date | null;
  heldBy: { connectionId: string; watermark: string | null }[];
  late: number;
  sideOutput: number;
  /** The zone the insights' days are cut in (`insights_state.time_zone`, else the stage's default). */
  timeZone: string;
}

@Injectable()
export class SyncHealthRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** Every provider connection of the workspace with its lag and its pending writes. */
  async connections(workspaceId: WorkspaceId): Promise<ConnectionHealthRecord[]> {
    return this.prisma.$queryRawUnsafe<ConnectionHealthRecord[]>(
      CONNECTION_HEALTH_SQL,
      workspaceId,
      [...PROVIDER_KEYS],
      SYNC_CONSUMER_GROUP,
    );
  }

  async openDeadLetters(workspaceId: WorkspaceId): Promise<number> {
    return this.prisma.deadLetter.count({ where: { workspaceId, status: 'open' } });
  }

  /** The activity insights' watermark, who holds it, and what came late (InsightsFold's row). */
  async insights(workspaceId: WorkspaceId): Promise<InsightsHealthRecord> {
    const [row] = await this.prisma.$queryRaw<InsightsHealthRecord[]>`
      SELECT s.watermark AS "completeUpTo", s.held_by AS "heldBy", s.late,
             coalesce(s.time_zone, ${DEFAULT_TIME_ZONE}) AS "timeZone",
             (SELECT count(*)::int FROM insights_side_output o WHERE o.workspace_id = ${workspaceId}::uuid) AS "sideOutput"
        FROM insights_state s WHERE s.workspace_id = ${workspaceId}::uuid`;
    return row ?? { completeUpTo: null, heldBy: [], late: 0, sideOutput: 0, timeZone: DEFAULT_TIME_ZONE };
  }

  /** The workspace's provider connections (one, with `connectionId`) that the history shows. */
  async historyConnections(
    workspaceId: WorkspaceId,
    connectionId?: string,
  ): Promise<HistoryConnectionInfo[]> {
    return this.prisma.$queryRaw<HistoryConnectionInfo[]>`
      SELECT c.id::text AS "id", c.provider::text AS "provider", c.display_name AS "displayName"
        FROM connection c
       WHERE c.workspace_id = ${workspaceId}::uuid AND c.provider::text = ANY(${[...PROVIDER_KEYS]}::text[])
         AND (${connectionId ?? null}::uuid IS NULL OR c.id = ${connectionId ?? null}::uuid)
       ORDER BY c.created_at, c.id`;
  }

  /**
   * The workspace's samples in the range, merged per connection into buckets of
   * `bucketSeconds`: the largest lag, delay and backlog sampled, the writes summed. One range
   * of the samples' primary key (workspace, time). Buckets start on multiples of their width
   * since the epoch, so a chart polled again keeps its points where they were.
   */
  async historyBuckets(workspaceId: WorkspaceId, range: HistoryRange): Promise<HistoryBucketRow[]> {
    return this.prisma.$queryRaw<HistoryBucketRow[]>`
      SELECT s.connection_id::text AS "connectionId",
             date_bin(make_interval(secs => ${range.bucketSeconds}), s.sampled_at, TIMESTAMPTZ 'epoch') AS "at",
             max(s.lag_events)::int AS "lagEvents", max(s.watermark_delay_seconds)::int AS "watermarkDelaySeconds",
             max(s.pending_writes)::int AS "pendingWrites", sum(s.writes_ok)::int AS "writesOk",
             max(s.consumer_lag)::int AS "consumerLag", max(s.dead_letters_open)::int AS "deadLettersOpen"
        FROM sync_health_sample s
       WHERE s.workspace_id = ${workspaceId}::uuid
         AND s.sampled_at >= ${range.from}::timestamptz AND s.sampled_at <= ${range.to}::timestamptz
         AND (${range.connectionId ?? null}::uuid IS NULL OR s.connection_id = ${range.connectionId ?? null}::uuid)
       GROUP BY 1, 2`;
  }

  /** The writes refused in the range, per connection, bucket and error code. */
  async historyFailures(workspaceId: WorkspaceId, range: HistoryRange): Promise<HistoryFailureRow[]> {
    return this.prisma.$queryRaw<HistoryFailureRow[]>`
      SELECT s.connection_id::text AS "connectionId",
             date_bin(make_interval(secs => ${range.bucketSeconds}), s.sampled_at, TIMESTAMPTZ 'epoch') AS "at",
             f.key AS "code", sum(f.value::int)::int AS "writes"
        FROM sync_health_sample s CROSS JOIN LATERAL jsonb_each_text(s.writes_failed) AS f
       WHERE s.workspace_id = ${workspaceId}::uuid
         AND s.sampled_at >= ${range.from}::timestamptz AND s.sampled_at <= ${range.to}::timestamptz
         AND (${range.connectionId ?? null}::uuid IS NULL OR s.connection_id = ${range.connectionId ?? null}::uuid)
         AND s.writes_failed <> '{}'::jsonb
       GROUP BY 1, 2, 3`;
  }

  /**
   * The workspace's figures per bucket, summed over its connections in SQL (a bucket a row,
   * however many connections): each sample time's writes and backlogs summed, then per bucket
   * the writes summed and the largest backlog, consumer lag and open dead letters. The writes
   * refused come from historyFailures without `connectionId`, keyed by bucket.
   */
  async workspaceHistory(workspaceId: WorkspaceId, range: HistoryRange): Promise<WorkspaceBucketRow[]> {
    return this.prisma.$queryRaw<WorkspaceBucketRow[]>`
      SELECT date_bin(make_interval(secs => ${range.bucketSeconds}), t.sampled_at, TIMESTAMPTZ 'epoch') AS "at",
             max(t.consumer_lag)::int AS "consumerLag", max(t.dead_letters_open)::int AS "deadLettersOpen",
             sum(t.writes_ok)::int AS "writesOk", max(t.pending_writes)::int AS "pendingWrites"
        FROM (SELECT s.sampled_at, max(s.consumer_lag) AS consumer_lag, max(s.dead_letters_open) AS dead_letters_open,
                     sum(s.writes_ok) AS writes_ok, sum(s.pending_writes) AS pending_writes
                FROM sync_health_sample s
               WHERE s.workspace_id = ${workspaceId}::uuid
                 AND s.sampled_at >= ${range.from}::timestamptz AND s.sampled_at <= ${range.to}::timestamptz
                 AND EXISTS (SELECT 1 FROM connection c
                              WHERE c.id = s.connection_id AND c.workspace_id = s.workspace_id)
               GROUP BY s.sampled_at) AS t
       GROUP BY 1
       ORDER BY 1`;
  }

  /** The writes the workspace's connections refused in the range, per bucket and error code. */
  async workspaceFailures(
    workspaceId: WorkspaceId,
    range: HistoryRange,
  ): Promise<{ at: Date; code: string; writes: number }[]> {
    return this.prisma.$queryRaw<{ at: Date; code: string; writes: number }[]>`
      SELECT date_bin(make_interval(secs => ${range.bucketSeconds}), s.sampled_at, TIMESTAMPTZ 'epoch') AS "at",
             f.key AS "code", sum(f.value::int)::int AS "writes"
        FROM sync_health_sample s CROSS JOIN LATERAL jsonb_each_text(s.writes_failed) AS f
       WHERE s.workspace_id = ${workspaceId}::uuid
         AND s.sampled_at >= ${range.from}::timestamptz AND s.sampled_at <= ${range.to}::timestamptz
         AND s.writes_failed <> '{}'::jsonb
         AND EXISTS (SELECT 1 FROM connection c WHERE c.id = s.connection_id AND c.workspace_id = s.workspace_id)
       GROUP BY 1, 2`;
  }
}
