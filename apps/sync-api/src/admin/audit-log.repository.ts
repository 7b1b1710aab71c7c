import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyId, WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { PageCursor } from './page-cursor';

/** The client a write goes through: the app's, or a transaction the caller is in. */
export type Db = Prisma.TransactionClient;

export interface NewAuditEntry {
  workspaceId: WorkspaceId;
  actorKeyId: ApiKeyId;
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

  /** The actor's user is the key's, looked up in the same workspace. */
  async insert(entry: NewAuditEntry, db: Db = this.prisma): Promise<void> {
    const key = await db.apiKey.findFirst({
      where: { id: entry.actorKeyId, workspaceId: entry.workspaceId },
      select: { userId: true },
    });
    await db.auditLog.create({
      data: {
        workspaceId: entry.workspaceId,
        actorKeyId: entry.actorKeyId,
        actorUserId: key?.userId ?? null,
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
    page: { before?: PageCursor | undefined; limit: number },
  ): Promise<AuditEntryRecord[]> {
    return this.prisma.auditLog.findMany({
      where: {
        workspaceId,
        ...(page.before ? { OR: olderThan(page.before) } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit,
      select: RECORD,
    });
  }
}

function olderThan({ createdAt, id }: PageCursor): Prisma.AuditLogWhereInput[] {
  return [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }];
}
