import { HttpStatus, Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { ChangeLog } from '@syncline/log';
import { timeZoneChangeInput } from '@syncline/sync-stage';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { AuditLogService } from '../admin/audit-log.service';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { OwnConnections } from '../infra/own-connection';
import { TimeZoneRepository } from './time-zone.repository';
import { DEFAULT_TIME_ZONE, type ReplaceTimeZoneBody, type TimeZoneView } from './time-zone.schemas';

/**
 * The zone the workspace's days are cut in (the activity insights' windows): read it, and change
 * it (versioned, audited, and put on the change log). The sync stage does not read
 * `workspace.time_zone`: a change goes on the log as a `time_zone` event in the transaction that
 * saves it, and the stage recomputes the windows in the new zone where it meets the event, live or
 * replayed from zero. `inForce` is the zone the stage's current results are cut in.
 */
@Injectable()
export class TimeZoneService {
  constructor(
    @Inject(TimeZoneRepository) private readonly zones: TimeZoneRepository,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(OwnConnections) private readonly own: OwnConnections,
    @InjectPinoLogger(TimeZoneService.name) private readonly logger: PinoLogger,
  ) {}

  async get(principal: Principal): Promise<TimeZoneView> {
    const found = await this.zones.find(principal.workspaceId);
    return { timeZone: found.timeZone, version: found.version, inForce: found.inForce ?? DEFAULT_TIME_ZONE };
  }

  /** Sets the zone; the same zone again changes nothing. 412 when `ifMatch` is stale. */
  async replace(
    principal: Principal,
    body: ReplaceTimeZoneBody,
    ifMatch: number | undefined,
  ): Promise<TimeZoneView> {
    const { workspaceId } = principal;
    const ownConnection = await this.own.of(workspaceId);
    const replaced = await this.zones.replace(workspaceId, body.timeZone, ifMatch, async (tx, change) => {
      const { from, to, version } = change;
      await this.audit.record(
        principal,
        'workspace.time_zone_changed',
        workspaceId,
        { from, to, version },
        tx,
      );
      // On the log with the setting or not at all: the sync stage puts it in force from there.
      const appended = await this.log.appendWithin(
        <T>(text: string, values: unknown[]) => tx.$queryRawUnsafe<T[]>(text, ...values),
        [timeZoneChangeInput(workspaceId, ownConnection, { timeZone: change.to, version: change.version })],
      );
      if (!appended.ok) {
        if (appended.error.code === 'Closed')
          throw new ServiceUnavailableException('shutting down; send again');
        throw new Error(`the change log refused a time zone change: ${appended.error.message}`);
      }
    });
    if (!replaced.ok)
      throw new CodedHttpException(
        HttpStatus.PRECONDITION_FAILED,
        'precondition_failed',
        `the time zone is at version ${replaced.error.version}, not ${ifMatch}`,
      );
    const view = await this.get(principal);
    if (replaced.value.changed)
      this.logger.info(
        { workspaceId, timeZone: view.timeZone, version: view.version },
        'workspace time zone changed',
      );
    return view;
  }
}
