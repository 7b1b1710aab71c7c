import { Inject, Injectable } from '@nestjs/common';
import { ActorLabels, type Labels } from '../auth/actor-labels';
import { actorRef } from '../auth/actor-ref';
import type { Actor, Principal } from '../auth/principal';
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
  constructor(
    @Inject(AuditLogRepository) private readonly entries: AuditLogRepository,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
  ) {}

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
        actor: principal.actor,
        action,
        targetType: AUDIT_ACTIONS[action],
        targetId,
        details,
      },
      db,
    );
  }

  async list(principal: Principal, query: AuditLogQuery): Promise<AuditLogPage> {
    const actor: Actor | undefined =
      query.actorId === undefined ? undefined : { kind: query.actorKind ?? 'apiKey', id: query.actorId };
    const rows = await this.entries.list(principal.workspaceId, {
      before: query.cursor,
      limit: query.limit + 1,
      actor,
      action: query.action,
    });
    const page = toPage(rows, query.limit);
    const labels = await this.labels.resolve(principal.workspaceId, {
      actors: page.rows.map(actorOf).map(actorRef),
    });
    return { data: page.rows.map((row) => toView(row, labels)), nextCursor: page.nextCursor };
  }
}

/** A key's entry: the key; else the member (entries always name one or the other). */
function actorOf(entry: AuditEntryRecord): Actor {
  if (entry.actorKeyId !== null) return { kind: 'apiKey', id: entry.actorKeyId };
  return { kind: 'member', id: entry.actorUserId ?? '' };
}

function toView(entry: AuditEntryRecord, labels: Labels): AuditEntryView {
  const actor = actorOf(entry);
  return {
    id: entry.id,
    action: entry.action as AuditAction,
    targetType: entry.targetType as AuditEntryView['targetType'],
    targetId: entry.targetId,
    actor: {
      kind: actor.kind,
      id: actor.id,
      label: labels.actor(actorRef(actor)).label,
      keyId: entry.actorKeyId,
      userId: entry.actorUserId,
    },
    details: entry.details as AuditEntryView['details'],
    createdAt: entry.createdAt.toISOString(),
  };
}
