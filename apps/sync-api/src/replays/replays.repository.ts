import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Db } from '../admin/audit-log.repository';
import type { PageCursor } from '../admin/page-cursor';

export type ReplayRecord = Prisma.ReplayGetPayload<object>;

@Injectable()
export class ReplaysRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * A queued replay, unless one of the workspace is queued or running. The check holds the
   * workspace row (FOR NO KEY UPDATE: inserts elsewhere that check their workspace key go on),
   * so two requests at once cannot both pass it. `audit` runs in the same transaction.
   */
  async create(
    input: { workspaceId: WorkspaceId; mode: string; fromEventTime: Date | null; createdBy: string },
    audit: (tx: Db, replay: ReplayRecord) => Promise<void>,
  ): Promise<Result<ReplayRecord, { code: 'replay_running'; id: string }>> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM workspace WHERE id = ${input.workspaceId}::uuid FOR NO KEY UPDATE`;
      const active = await tx.replay.findFirst({
        where: { workspaceId: input.workspaceId, status: { in: ['queued', 'running'] } },
        select: { id: true },
      });
      if (active) return err({ code: 'replay_running' as const, id: active.id });
      const replay = await tx.replay.create({ data: input });
      await audit(tx, replay);
      return ok(replay);
    });
  }

  /** Queuing it failed: it will never run, and must not hold the workspace's one slot. */
  async failUnqueued(id: string, reason: string): Promise<void> {
    await this.prisma.replay.updateMany({
      where: { id, status: 'queued' },
      data: { status: 'failed', failureReason: reason, finishedAt: new Date() },
    });
  }

  find(workspaceId: WorkspaceId, id: string): Promise<ReplayRecord | null> {
    return this.prisma.replay.findFirst({ where: { id, workspaceId } });
  }

  /** Newest first, strictly after `before` in that order. */
  list(workspaceId: WorkspaceId, page: { before?: PageCursor | undefined; limit: number }) {
    const before = page.before;
    return this.prisma.replay.findMany({
      where: {
        workspaceId,
        ...(before
          ? {
              OR: [
                { createdAt: { lt: before.createdAt } },
                { createdAt: before.createdAt, id: { lt: before.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit,
    });
  }
}
