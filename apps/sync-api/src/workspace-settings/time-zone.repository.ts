import { Inject, Injectable } from '@nestjs/common';
import { err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import type { Db } from '../admin/audit-log.repository';

export interface TimeZoneRecord {
  timeZone: string;
  version: number;
  /** `insights_state.time_zone`: null while the stage cuts the workspace's days in its default. */
  inForce: string | null;
}

export interface TimeZoneChangeRecord {
  from: string;
  to: string;
  version: number;
}

@Injectable()
export class TimeZoneRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** The workspace's setting, and the zone the sync stage last put in force for it. */
  async find(workspaceId: WorkspaceId): Promise<TimeZoneRecord> {
    const [workspace, state] = await Promise.all([
      this.prisma.workspace.findUniqueOrThrow({
        where: { id: workspaceId },
        select: { timeZone: true, timeZoneVersion: true },
      }),
      this.prisma.insightsState.findUnique({ where: { workspaceId }, select: { timeZone: true } }),
    ]);
    return {
      timeZone: workspace.timeZone,
      version: workspace.timeZoneVersion,
      inForce: state?.timeZone ?? null,
    };
  }

  /**
   * Sets the zone under the next version, in one transaction that `alsoInTx` (the audit entry,
   * the log's event) joins; the workspace's row is locked first, so changes of one workspace
   * are serialised and each reads the version the one before it wrote. `stale` when the setting
   * is no longer at `expectedVersion`; `unchanged` (nothing written) when it already is `timeZone`.
   */
  async replace(
    workspaceId: WorkspaceId,
    timeZone: string,
    expectedVersion: number | undefined,
    alsoInTx: (tx: Db, change: TimeZoneChangeRecord) => Promise<void>,
  ): Promise<Result<{ changed: boolean }, { code: 'stale'; version: number }>> {
    return this.prisma.$transaction(async (tx) => {
      // NO KEY UPDATE: rows that only reference the workspace (the audit entry) are not held up.
      const [current] = await tx.$queryRaw<{ time_zone: string; time_zone_version: number }[]>`
        SELECT time_zone, time_zone_version FROM workspace WHERE id = ${workspaceId}::uuid FOR NO KEY UPDATE`;
      if (current === undefined) throw new Error(`workspace ${workspaceId} does not exist`);
      if (expectedVersion !== undefined && expectedVersion !== current.time_zone_version)
        return err({ code: 'stale' as const, version: current.time_zone_version });
      if (current.time_zone === timeZone) return ok({ changed: false });
      const version = current.time_zone_version + 1;
      await tx.workspace.update({
        where: { id: workspaceId },
        data: { timeZone, timeZoneVersion: version },
        select: { id: true },
      });
      await alsoInTx(tx, { from: current.time_zone, to: timeZone, version });
      return ok({ changed: true });
    });
  }
}
