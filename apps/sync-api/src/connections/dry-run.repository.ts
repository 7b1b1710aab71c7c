import { Inject, Injectable } from '@nestjs/common';
import {
  type ConnectionId,
  err,
  ok,
  type Result,
  type SourceChangeInput,
  type WorkspaceId,
} from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { StagingChangeLog } from '@syncline/log';
import type { Db } from '../admin/audit-log.repository';
import type { ConnectionStatus } from './connections.schemas';

/** Staged changes moved onto the log per step. */
const CHUNK = 500;
/** A big backfill takes a while to move; Prisma's 5 s default is too short. */
const ENABLE_TIMEOUT_MS = 120_000;

export type EnableError =
  | { code: 'not_found' }
  | { code: 'connection_disconnected' }
  | { code: 'log_refused'; message: string };

export interface Enabled {
  /** Staged changes put on the log (a change already there counts too: the log drops it). */
  moved: number;
  /** It was in dry run until now (false: enabled before, or a retry that moved what was left). */
  changed: boolean;
  previousStatus: ConnectionStatus;
}

type StagedRow = Prisma.StagedChangeGetPayload<object>;

/** A point of a connection's backfill: its last staged change, and whether the backfill finished. */
export interface BackfillPoint {
  stagedUpTo: string;
  complete: boolean;
}

/** The report the workers last stored for a connection, or the reason their last try failed. */
export interface StoredDryRun {
  report: Prisma.JsonValue | null;
  at: BackfillPoint | null;
  computedAt: Date | null;
  failureReason: string | null;
  failedAt: Date | null;
}

const toChange = (row: StagedRow): SourceChangeInput => ({
  workspaceId: row.workspaceId,
  connectionId: row.connectionId,
  entityType: row.entityType as SourceChangeInput['entityType'],
  externalId: row.externalId,
  op: row.op as SourceChangeInput['op'],
  eventKey: row.eventKey,
  eventTime: row.eventTime,
  fields: row.fields as Record<string, unknown>,
  fieldTimes: row.fieldTimes as Record<string, string>,
  ...(row.providerVersion === null ? {} : { providerVersion: row.providerVersion }),
  ...(row.origin === null ? {} : { origin: row.origin as Record<string, unknown> }),
});

/**
 * Ends a connection's dry run: its staged changes go onto the log in the order they were
 * staged, under their event keys (a change already there is dropped by the log: a retried
 * enable puts nothing on it twice), and the flag is cleared.
 *
 * Most of the backlog is moved while pulls may still stage more; the rest is moved holding
 * the connection row (FOR NO KEY UPDATE), which a staging append waits for (FOR SHARE) and
 * then finds the flag cleared, so it goes to the log after everything staged before it. The
 * sync stage's share lock (FOR KEY SHARE) is not blocked meanwhile.
 */
@Injectable()
export class DryRunRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** Where the connection's backfill is now (the workers' report covers the same point when it is current). */
  async backfillPoint(id: ConnectionId): Promise<BackfillPoint | undefined> {
    const rows = await this.prisma.$queryRaw<{ staged_up_to: string; complete: boolean }[]>`
      SELECT (SELECT COALESCE(max(s.id), 0) FROM staged_change s WHERE s.connection_id = c.id)::text AS staged_up_to,
             COALESCE(jsonb_exists(c.cursors, 'live'), false) AS complete
        FROM connection c WHERE c.id = ${id}::uuid`;
    const row = rows[0];
    return row && { stagedUpTo: row.staged_up_to, complete: row.complete };
  }

  async stored(id: ConnectionId): Promise<StoredDryRun | undefined> {
    const row = await this.prisma.dryRunReport.findUnique({ where: { connectionId: id } });
    if (!row) return undefined;
    return {
      report: row.report,
      at:
        row.stagedUpTo === null || row.complete === null
          ? null
          : { stagedUpTo: row.stagedUpTo.toString(), complete: row.complete },
      computedAt: row.computedAt,
      failureReason: row.failureReason,
      failedAt: row.failedAt,
    };
  }

  async enable(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    log: StagingChangeLog,
    onEnabled: (tx: Db, enabled: Enabled) => Promise<void>,
  ): Promise<Result<Enabled, EnableError>> {
    const found = await this.prisma.connection.findFirst({
      where: { id, workspaceId, provider: { not: 'syncline' } },
      select: { status: true },
    });
    if (!found) return err({ code: 'not_found' });
    if (found.status === 'disconnected') return err({ code: 'connection_disconnected' });
    let moved = 0;
    for (;;) {
      const step = await this.moveChunk(this.prisma, id, log);
      if (!step.ok) return step;
      moved += step.value;
      if (step.value < CHUNK) break;
    }
    return this.prisma.$transaction(
      async (tx) => {
        const rows = await tx.$queryRaw<{ status: ConnectionStatus; dry_run: boolean }[]>`
          SELECT status, dry_run FROM connection WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid
          FOR NO KEY UPDATE`;
        const row = rows[0];
        if (!row) return err({ code: 'not_found' as const });
        if (row.status === 'disconnected') return err({ code: 'connection_disconnected' as const });
        for (;;) {
          const step = await this.moveChunk(tx, id, log);
          if (!step.ok) return step;
          moved += step.value;
          if (step.value < CHUNK) break;
        }
        if (row.dry_run)
          await tx.$executeRaw`UPDATE connection SET dry_run = false, updated_at = now() WHERE id = ${id}::uuid`;
        const enabled: Enabled = { moved, changed: row.dry_run, previousStatus: row.status };
        if (row.dry_run || moved > 0) await onEnabled(tx, enabled);
        return ok(enabled);
      },
      { timeout: ENABLE_TIMEOUT_MS, maxWait: 10_000 },
    );
  }

  /** Appends the oldest staged changes to the log, then drops them; how many. */
  private async moveChunk(
    db: Db | PrismaClient,
    connectionId: ConnectionId,
    log: StagingChangeLog,
  ): Promise<Result<number, EnableError>> {
    const rows = await db.stagedChange.findMany({
      where: { connectionId },
      orderBy: { id: 'asc' },
      take: CHUNK,
    });
    if (rows.length === 0) return ok(0);
    const appended = await log.appendToLog(rows.map(toChange));
    if (!appended.ok) return err({ code: 'log_refused', message: appended.error.message });
    await db.stagedChange.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
    return ok(rows.length);
  }
}
