import { Inject, Injectable } from '@nestjs/common';
import { type ConnectionStatus, PROVIDER_KEYS, type ProviderKey, type WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import { SYNC_CONSUMER_GROUP } from '../connections/connections.repository';

export interface ConnectionHealthRecord {
  id: string;
  provider: ProviderKey;
  status: ConnectionStatus;
  statusReason: string | null;
  backfillSeen: number;
  backfillTotal: number | null;
  lastPullAt: Date | null;
  lastSuccessAt: Date | null;
  lastErrorCode: string | null;
  watermark: Date | null;
  lagEvents: number;
  pendingWrites: number;
}

@Injectable()
export class SyncHealthRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * Every provider connection of the workspace with its lag and its pending writes. The lag
   * reads only the unread tail of each partition (primary key range `offset > committed`),
   * as the connections API does; a partition the group never committed counts from the start.
   */
  async connections(workspaceId: WorkspaceId): Promise<ConnectionHealthRecord[]> {
    return this.prisma.$queryRaw<ConnectionHealthRecord[]>`
      SELECT c.id::text AS "id", c.provider::text AS "provider", c.status::text AS "status",
             c.status_reason AS "statusReason", c.backfill_seen AS "backfillSeen",
             c.backfill_total AS "backfillTotal", c.last_pull_at AS "lastPullAt",
             c.last_success_at AS "lastSuccessAt", c.last_error_code AS "lastErrorCode",
             c.watermark AS "watermark",
             (SELECT count(*)::int
                FROM log_partition h
                LEFT JOIN consumer_offset o ON o.group_name = ${SYNC_CONSUMER_GROUP} AND o.partition = h.partition
                JOIN change_event e ON e.partition = h.partition AND e."offset" > COALESCE(o.committed_offset, 0)
               WHERE e.connection_id = c.id AND e.workspace_id = c.workspace_id) AS "lagEvents",
             (SELECT count(*)::int FROM outbox w
               WHERE w.connection_id = c.id AND w.workspace_id = c.workspace_id
                 AND w.status IN ('pending', 'sending')) AS "pendingWrites"
        FROM connection c
       WHERE c.workspace_id = ${workspaceId}::uuid AND c.provider::text = ANY(${[...PROVIDER_KEYS]}::text[])
       ORDER BY c.created_at, c.id`;
  }

  async openDeadLetters(workspaceId: WorkspaceId): Promise<number> {
    return this.prisma.deadLetter.count({ where: { workspaceId, status: 'open' } });
  }
}
