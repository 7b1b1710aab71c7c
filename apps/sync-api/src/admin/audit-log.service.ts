import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal';
import { type AuditEntryRecord, AuditLogRepository, type Db } from './audit-log.repository';
import {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditDetails,
  type AuditEntryView,
  type AuditLogPage,
  type AuditLogQuery,
} from './audit-log.schemas';
import { toPage } from './page-cursor';

/** The workspace's trail of admin actions. Other modules record through `record`. */
@Injectable()
export class AuditLogService {
  constructor(@Inject(AuditLogRepository) private readonly entries: AuditLogRepository) {}

  /**
   * Records that the caller did `action` to `targetId`. Pass the transaction the action
   * runs in, when there is one, so that the entry commits (or not) with it.
   */
  async record(
    principal: Principal,
    action: AuditAction,
    targetId: string,
    details: AuditDetails = {},
    db?: Db,
  ): Promise<void> {
    await this.entries.insert(
      {
        workspaceId: principal.workspaceId,
        actorKeyId: principal.apiKeyId,
        action,
        targetType: AUDIT_ACTIONS[action],
        targetId,
        details,
      },
      db,
    );
  }

  async list(principal: Principal, query: AuditLogQuery): Promise<AuditLogPage> {
    const rows = await this.entries.list(principal.workspaceId, {
      before: query.cursor,
      limit: query.limit + 1,
    });
    const page = toPage(rows, query.limit);
    return { data: page.rows.map(toView), nextCursor: page.nextCursor };
  }
}

function toView(entry: AuditEntryRecord): AuditEntryView {
  return {
    id: entry.id,
    action: entry.action as AuditAction,
    targetType: entry.targetType as AuditEntryView['targetType'],
    targetId: entry.targetId,
    actor: { keyId: entry.actorKeyId, userId: entry.actorUserId },
    details: entry.details as AuditEntryView['details'],
    createdAt: entry.createdAt.toISOString(),
  };
}
