import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal';
import { type ConnectionHealthRecord, SyncHealthRepository } from './sync-health.repository';
import type { ConnectionHealth, SyncHealthView } from './sync-health.schemas';

@Injectable()
export class SyncHealthService {
  constructor(@Inject(SyncHealthRepository) private readonly health: SyncHealthRepository) {}

  async check(principal: Principal): Promise<SyncHealthView> {
    const [connections, openDeadLetters] = await Promise.all([
      this.health.connections(principal.workspaceId),
      this.health.openDeadLetters(principal.workspaceId),
    ]);
    const now = new Date();
    return {
      connections: connections.map((record) => toView(record, now)),
      deadLetters: { open: openDeadLetters },
      checkedAt: now.toISOString(),
    };
  }
}

function toView(record: ConnectionHealthRecord, now: Date): ConnectionHealth {
  return {
    id: record.id,
    provider: record.provider,
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
