import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { ProviderKey } from '@syncline/core';
import type { Principal } from '../auth/principal';
import { ValidationFailedException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { type ConnectionHealthRecord, SyncHealthRepository } from './sync-health.repository';
import type {
  ConnectionHealth,
  SyncHealthHistoryQuery,
  SyncHealthHistoryView,
  SyncHealthView,
} from './sync-health.schemas';
import { historyBucketSeconds, toHistorySeries, toWorkspaceSeries } from './sync-health-history';

const HOUR_MS = 3_600_000;

@Injectable()
export class SyncHealthService {
  constructor(
    @Inject(SyncHealthRepository) private readonly health: SyncHealthRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async check(principal: Principal): Promise<SyncHealthView> {
    const [connections, openDeadLetters, insights] = await Promise.all([
      this.health.connections(principal.workspaceId),
      this.health.openDeadLetters(principal.workspaceId),
      this.health.insights(principal.workspaceId),
    ]);
    const now = new Date();
    return {
      connections: connections.map((record) => toView(record, now)),
      deadLetters: { open: openDeadLetters },
      insights: { ...insights, completeUpTo: insights.completeUpTo?.toISOString() ?? null },
      checkedAt: now.toISOString(),
    };
  }

  /** The last `hours` of sampled health, per connection and for the workspace, downsampled. */
  async history(principal: Principal, query: SyncHealthHistoryQuery): Promise<SyncHealthHistoryView> {
    const kept = this.config.HEALTH_HISTORY_RETENTION_HOURS;
    if (query.hours > kept)
      throw new ValidationFailedException(
        [{ code: 'custom', path: [], message: `at most ${kept} hours are kept`, input: undefined }],
        { part: 'query', name: 'hours' },
      );
    const connections = await this.health.historyConnections(principal.workspaceId, query.connectionId);
    if (query.connectionId !== undefined && connections.length === 0)
      throw new NotFoundException(`no connection ${query.connectionId}`);
    const to = new Date();
    const from = new Date(to.getTime() - query.hours * HOUR_MS);
    const range = {
      from,
      to,
      bucketSeconds: historyBucketSeconds(query.hours),
      connectionId: query.connectionId,
    };
    const base = {
      hours: query.hours,
      from: from.toISOString(),
      to: to.toISOString(),
      bucketSeconds: range.bucketSeconds,
    };
    if (query.scope === 'workspace' && query.connectionId === undefined) {
      // Summed in SQL: a row a bucket, however many connections the workspace has.
      const [buckets, failures] = await Promise.all([
        this.health.workspaceHistory(principal.workspaceId, range),
        this.health.workspaceFailures(principal.workspaceId, range),
      ]);
      return { ...base, connections: [], workspace: toWorkspaceSeries(buckets, failures) };
    }
    const [buckets, failures] = await Promise.all([
      this.health.historyBuckets(principal.workspaceId, range),
      this.health.historyFailures(principal.workspaceId, range),
    ]);
    const series = toHistorySeries(connections, buckets, failures);
    return {
      ...base,
      connections:
        query.scope === 'workspace'
          ? []
          : series.connections.map((c) => ({ ...c, provider: c.provider as ProviderKey })),
      workspace: series.workspace,
    };
  }
}

function toView(record: ConnectionHealthRecord, now: Date): ConnectionHealth {
  return {
    id: record.id,
    provider: record.provider,
    displayName: record.displayName,
    externalAccountId: record.externalAccountId,
    dryRun: record.dryRun,
    hasCredentials: record.hasCredentials,
    status: record.status,
    statusReason: record.statusReason,
    backfill: { seen: record.backfillSeen, total: record.backfillTotal },
    lastPullAt: record.lastPullAt?.toISOString() ?? null,
    lastSuccessAt: record.lastSuccessAt?.toISOString() ?? null,
    lastErrorCode: record.lastErrorCode,
    watermark: record.watermark?.toISOString() ?? null,
    watermarkDelaySeconds: record.watermark
      ? Math.max(0, Math.floor((now.getTime() - record.watermark.getTime()) / 1000))
      : null,
    lag: { events: record.lagEvents },
    pendingWrites: record.pendingWrites,
  };
}
