import {
  HttpStatus,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { ConnectionId } from '@syncline/core';
import { dryRunJobId, JobClient } from '@syncline/jobs';
import { StagingChangeLog } from '@syncline/log';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { AuditLogService } from '../admin/audit-log.service';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { refusalMessage } from './connection-lifecycle';
import { type ConnectionRecord, ConnectionsRepository } from './connections.repository';
import type { ConnectionView } from './connections.schemas';
import { ConnectionsService } from './connections.service';
import { type BackfillPoint, DryRunRepository, type StoredDryRun } from './dry-run.repository';
import type { DryRunComputingView, DryRunQuery, DryRunReportView } from './dry-run.schemas';

/**
 * How long a request waits for the workers to compute a report before answering what it has:
 * a small backfill's report is in hand by then; a large one's is answered `202` (computing).
 */
const WAIT_MS = 2_000;
const POLL_MS = 150;

/** The stored report, or (202) that the first one is being computed or why the last try failed. */
export type DryRunAnswer =
  | { kind: 'report'; report: DryRunReportView }
  | { kind: 'computing'; body: DryRunComputingView };

const RETRY_AFTER_SECONDS = 2;
const REFRESH_WINDOW_MS = 10_000;

const disconnected = (id: string, action: string) =>
  new CodedHttpException(
    HttpStatus.CONFLICT,
    'connection_disconnected',
    refusalMessage('connection_disconnected', id, action),
  );

const samePoint = (a: BackfillPoint | null, b: BackfillPoint) =>
  a !== null && a.stagedUpTo === b.stagedUpTo && a.complete === b.complete;

/**
 * The dry run of a new connection: its report, and the enable that ends it. The workers
 * compute the report (`connection.dry-run`) and store it; it is served as stored until the
 * connection's backfill moves on (or a refresh is asked for), then computed again while the
 * request waits up to WAIT_MS for it.
 */
@Injectable()
export class DryRunService {
  constructor(
    @Inject(ConnectionsRepository) private readonly connections: ConnectionsRepository,
    @Inject(ConnectionsService) private readonly views: ConnectionsService,
    @Inject(DryRunRepository) private readonly dryRuns: DryRunRepository,
    @Inject(StagingChangeLog) private readonly log: StagingChangeLog,
    @Inject(JobClient) private readonly jobs: JobClient,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @InjectPinoLogger(DryRunService.name) private readonly logger: PinoLogger,
  ) {}

  async report(principal: Principal, id: string, query: DryRunQuery): Promise<DryRunAnswer> {
    const connectionId = id as ConnectionId;
    const record = await this.connections.find(principal.workspaceId, connectionId);
    if (!record) throw new NotFoundException(`no connection ${id}`);
    if (!record.dryRun)
      throw new NotFoundException(`connection ${id} is not in dry run: it has no dry-run report`);
    if (record.status === 'disconnected') throw disconnected(id, 'report a dry run');
    const now = await this.dryRuns.backfillPoint(connectionId);
    if (now === undefined) throw new NotFoundException(`no connection ${id}`);
    const before = await this.dryRuns.stored(connectionId);
    const answer = (stored: StoredDryRun | undefined, stale: boolean): DryRunAnswer =>
      stored?.report
        ? { kind: 'report', report: view(stored, query.limit, stale) }
        : { kind: 'computing', body: computing(record, stored) };
    if (before?.report && samePoint(before.at, now) && !query.refresh) return answer(before, false);

    try {
      // A refresh, or a try after one the workers gave up on (its failed job keeps its id), is
      // a job of its own: at most one per REFRESH_WINDOW_MS, however often it is asked for.
      const again = query.refresh || (before?.failedAt ?? null) !== null;
      await this.jobs.enqueue(
        'connection.dry-run',
        { connectionId, ...now },
        again
          ? { jobId: `${dryRunJobId(connectionId, now)}.r${Math.floor(Date.now() / REFRESH_WINDOW_MS)}` }
          : {},
      );
    } catch (error) {
      this.logger.warn({ err: error, connectionId }, 'could not enqueue a dry run');
      if (before?.report) return answer(before, true);
      throw new ServiceUnavailableException('cannot queue work right now; try again');
    }
    const deadline = Date.now() + WAIT_MS;
    let latest = before;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      latest = await this.dryRuns.stored(connectionId);
      if (latest === undefined) continue;
      const computedAfter =
        latest.computedAt !== null && latest.computedAt.getTime() !== before?.computedAt?.getTime();
      const covers = latest.at !== null && BigInt(latest.at.stagedUpTo) >= BigInt(now.stagedUpTo);
      if (latest.report && computedAfter && covers && (latest.at?.complete ?? false) === now.complete)
        return answer(latest, false);
      // The workers gave up on it: the stored report (stale) or why there is none.
      if (latest.failedAt !== null && latest.failedAt.getTime() !== before?.failedAt?.getTime()) {
        this.logger.warn({ connectionId, reason: latest.failureReason }, 'the dry run could not be computed');
        return answer(latest, true);
      }
    }
    return answer(latest, true);
  }

  async enable(principal: Principal, id: string): Promise<ConnectionView> {
    const done = await this.dryRuns.enable(
      principal.workspaceId,
      id as ConnectionId,
      this.log,
      (tx, enabled) =>
        this.audit.record(
          principal,
          'connection.enabled',
          id,
          { moved: enabled.moved, previousStatus: enabled.previousStatus, wasDryRun: enabled.changed },
          tx,
        ),
    );
    if (!done.ok) {
      if (done.error.code === 'not_found') throw new NotFoundException(`no connection ${id}`);
      if (done.error.code === 'connection_disconnected') throw disconnected(id, 'be enabled');
      throw new Error(`the change log refused a staged change of ${id}: ${done.error.message}`);
    }
    if (done.value.changed || done.value.moved > 0)
      this.logger.info({ connectionId: id, moved: done.value.moved }, 'connection enabled: dry run ended');
    return this.views.get(principal, id);
  }
}

function computing(connection: ConnectionRecord, stored: StoredDryRun | undefined): DryRunComputingView {
  const failed = stored?.failedAt ?? null;
  return {
    computing: true,
    connectionId: connection.id,
    provider: connection.provider,
    externalAccountId: connection.externalAccountId,
    displayName: connection.displayName,
    backfill: { seen: connection.backfillSeen, estimatedTotal: connection.backfillTotal },
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    lastFailure:
      failed === null ? null : { at: failed.toISOString(), reason: stored?.failureReason ?? 'unknown' },
  };
}

/** The stored report as the API shows it: its lists cut to `limit`. */
function view(stored: StoredDryRun, limit: number, stale: boolean): DryRunReportView {
  const { stagedUpTo: _point, ...report } = stored.report as unknown as DryRunReportView & {
    stagedUpTo?: string;
  };
  const cut = <T>(list: T[]) => list.slice(0, limit);
  const totals = report.summary;
  return {
    ...report,
    stale,
    links: cut(report.links),
    creations: cut(report.creations),
    changes: cut(report.changes),
    conflicts: cut(report.conflicts),
    possibleDuplicates: cut(report.possibleDuplicates),
    failures: cut(report.failures),
    // A report stored before the workers named them names none.
    waitingTargets: report.waitingTargets ?? [],
    truncated: [
      totals.links,
      totals.creations,
      totals.changes,
      totals.conflicts,
      totals.possibleDuplicates,
      totals.failures,
    ].some((total) => total > limit),
  };
}
