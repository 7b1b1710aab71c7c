import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Db } from './audit-log.repository';
import type { DeadLetterStatus } from './dead-letters.schemas';
import type { PageCursor } from './page-cursor';

export interface DeadLetterRecord {
  id: string;
  workspaceId: WorkspaceId;
  source: string;
  groupName: string | null;
  partition: number | null;
  offset: bigint | null;
  connectionId: string | null;
  eventKey: string | null;
  errorCode: string;
  errorMessage: string;
  attempts: number;
  status: DeadLetterStatus;
  createdAt: Date;
  resolvedAt: Date | null;
}

export interface DeadLetterWithPayload extends DeadLetterRecord {
  payload: Prisma.JsonValue;
}

export interface DeadLetterFilter {
  status?: DeadLetterStatus | undefined;
  connectionId?: string | undefined;
  before?: PageCursor | undefined;
  limit: number;
}

/** Why a letter could not be settled: it is not in this workspace, or was settled already. */
export type SettleError = { code: 'not_found' } | { code: 'not_open'; status: DeadLetterStatus };

const RECORD = {
  id: true,
  workspaceId: true,
  source: true,
  groupName: true,
  partition: true,
  offset: true,
  connectionId: true,
  eventKey: true,
  errorCode: true,
  errorMessage: true,
  attempts: true,
  status: true,
  createdAt: true,
  resolvedAt: true,
} as const satisfies Prisma.DeadLetterSelect;
const WITH_PAYLOAD = { ...RECORD, payload: true } as const satisfies Prisma.DeadLetterSelect;

// A retry may append to the log while the letter is locked; that append waits for its batch.
const SETTLE_TIMEOUT_MS = 15_000;

/** Dead letters of one workspace at a time: a letter of another workspace is not there. */
@Injectable()
export class DeadLettersRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** Newest first, without payloads (they can be large). */
  async list(workspaceId: WorkspaceId, filter: DeadLetterFilter): Promise<DeadLetterRecord[]> {
    const rows = await this.prisma.deadLetter.findMany({
      where: {
        workspaceId,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.connectionId ? { connectionId: filter.connectionId } : {}),
        ...(filter.before ? { OR: olderThan(filter.before) } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: filter.limit,
      select: RECORD,
    });
    return rows.map(toRecord);
  }

  /** How many letters match the filter (its cursor and limit aside). */
  async count(workspaceId: WorkspaceId, filter: Omit<DeadLetterFilter, 'before' | 'limit'>): Promise<number> {
    return this.prisma.deadLetter.count({
      where: {
        workspaceId,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.connectionId ? { connectionId: filter.connectionId } : {}),
      },
    });
  }

  async find(workspaceId: WorkspaceId, id: string): Promise<DeadLetterWithPayload | null> {
    const row = await this.prisma.deadLetter.findFirst({ where: { id, workspaceId }, select: WITH_PAYLOAD });
    return row && { ...toRecord(row), payload: row.payload };
  }

  /**
   * Settles an open letter of this workspace as `status`. The letter is locked first, so of
   * two requests settling it the second waits and then finds it no longer open. `work` runs
   * in the same transaction and its writes commit with the new status; when it returns an
   * error nothing is written and the letter stays open.
   */
  async settle<T, E>(
    workspaceId: WorkspaceId,
    id: string,
    status: Exclude<DeadLetterStatus, 'open'>,
    work: (letter: DeadLetterWithPayload, tx: Db) => Promise<Result<T, E>>,
  ): Promise<Result<{ letter: DeadLetterWithPayload; outcome: T }, SettleError | E>> {
    return this.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`
          SELECT 1 FROM dead_letter WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid FOR UPDATE`;
        const current = await tx.deadLetter.findFirst({ where: { id, workspaceId }, select: WITH_PAYLOAD });
        if (!current) return err({ code: 'not_found' as const });
        if (current.status !== 'open') return err({ code: 'not_open' as const, status: current.status });
        const done = await work({ ...toRecord(current), payload: current.payload }, tx);
        if (!done.ok) return done;
        const settled = await tx.deadLetter.update({
          where: { id },
          data: { status, resolvedAt: new Date() },
          select: WITH_PAYLOAD,
        });
        return ok({ letter: { ...toRecord(settled), payload: settled.payload }, outcome: done.value });
      },
      { timeout: SETTLE_TIMEOUT_MS },
    );
  }

  /**
   * Puts failed outbox rows of this workspace back in line for the pusher. Rows sent or
   * superseded since are left alone: sending them again would repeat a write, or send
   * values a later write replaced.
   */
  async requeueFailedWrites(tx: Db, workspaceId: WorkspaceId, outboxIds: readonly bigint[]): Promise<number> {
    const { count } = await tx.outbox.updateMany({
      where: { workspaceId, id: { in: [...outboxIds] }, status: 'failed' },
      data: { status: 'pending', attempts: 0 },
    });
    return count;
  }
}

type RecordRow = Prisma.DeadLetterGetPayload<{ select: typeof RECORD }>;

function toRecord(row: RecordRow): DeadLetterRecord {
  return {
    id: row.id,
    // Only letters with a workspace are ever read here: every query filters on it.
    workspaceId: row.workspaceId as WorkspaceId,
    source: row.source,
    groupName: row.groupName,
    partition: row.partition,
    offset: row.offset,
    connectionId: row.connectionId,
    eventKey: row.eventKey,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    attempts: row.attempts,
    status: row.status,
    createdAt: row.createdAt,
    resolvedAt: row.resolvedAt,
  };
}

function olderThan({ createdAt, id }: PageCursor): Prisma.DeadLetterWhereInput[] {
  return [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }];
}
