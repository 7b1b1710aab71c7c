import { Inject, Injectable } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Actor } from '../auth/principal';
import type { PageCursor } from './page-cursor';

/** The client a write goes through: the app's, or a transaction the caller is in. */
export type Db = Prisma.TransactionClient;

export interface NewAuditEntry {
  workspaceId: WorkspaceId;
  actor: Actor;
  action: string;
  targetType: string;
  targetId: string;
  details: Prisma.InputJsonObject;
}

export interface AuditEntryRecord {
  id: string;
  action: string;
  targetType: string;
  targetId: string | null;
  actorKeyId: string | null;
  actorUserId: string | null;
  details: Prisma.JsonValue;
  createdAt: Date;
}

const RECORD = {
  id: true,
  action: true,
  targetType: true,
  targetId: true,
  actorKeyId: true,
  actorUserId: true,
  details: true,
  createdAt: true,
} as const satisfies Prisma.AuditLogSelect;

@Injectable()
export class AuditLogRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * A key's entry names the key and its member (looked up in the same workspace); a
   * member's entry names the member alone (actor_key_id null).
   */
  async insert(entry: NewAuditEntry, db: Db = this.prisma): Promise<void> {
    const { actor } = entry;
    const key =
      actor.kind === 'apiKey'
        ? await db.apiKey.findFirst({
            where: { id: actor.id, workspaceId: entry.workspaceId },
            select: { userId: true },
          })
        : null;
    await db.auditLog.create({
      data: {
        workspaceId: entry.workspaceId,
        actorKeyId: actor.kind === 'apiKey' ? actor.id : null,
        actorUserId: actor.kind === 'member' ? actor.id : (key?.userId ?? null),
        action: entry.action,
        targetType: entry.targetType,
        targetId: entry.targetId,
        details: entry.details,
      },
    });
  }

  /** Newest first, strictly after `before` in that order. */
  async list(
    workspaceId: WorkspaceId,
    page: {
      before?: PageCursor | undefined;
      limit: number;
      actor?: Actor | undefined;
      action?: string | undefined;
    },
  ): Promise<AuditEntryRecord[]> {
    return this.prisma.auditLog.findMany({
      where: {
        workspaceId,
        ...(page.actor ? byActor(page.actor) : {}),
        ...(page.action ? { action: page.action } : {}),
        ...(page.before ? { OR: olderThan(page.before) } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit,
      select: RECORD,
    });
  }
}

function byActor(actor: Actor): Prisma.AuditLogWhereInput {
  return actor.kind === 'apiKey' ? { actorKeyId: actor.id } : { actorKeyId: null, actorUserId: actor.id };
}

function olderThan({ createdAt, id }: PageCursor): Prisma.AuditLogWhereInput[] {
  return [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }];
}
