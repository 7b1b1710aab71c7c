import {
  HttpStatus,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { AuditLogService } from '../admin/audit-log.service';
import { toPage } from '../admin/page-cursor';
import { ActorLabels, type Labels } from '../auth/actor-labels';
import { actorRef, actorViewOf } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { ReplayQueue } from './replay-queue';
import { type ReplayRecord, ReplaysRepository } from './replays.repository';
import type { CreateReplayBody, ReplayListQuery, ReplayPage, ReplayView } from './replays.schemas';

/** Replays of the caller's workspace: ask for one (the workers run it), follow it, read its report. */
@Injectable()
export class ReplaysService {
  constructor(
    @Inject(ReplaysRepository) private readonly replays: ReplaysRepository,
    @Inject(ReplayQueue) private readonly queue: ReplayQueue,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @Inject(ActorLabels) private readonly labels: ActorLabels,
    @InjectPinoLogger(ReplaysService.name) private readonly logger: PinoLogger,
  ) {}

  async create(principal: Principal, body: CreateReplayBody): Promise<ReplayView> {
    const fromEventTime = body.from === 'beginning' ? null : new Date(body.from.eventTime);
    const created = await this.replays.create(
      {
        workspaceId: principal.workspaceId,
        mode: body.mode,
        fromEventTime,
        createdBy: actorRef(principal.actor),
      },
      (tx, replay) =>
        this.audit.record(
          principal,
          'replay.requested',
          replay.id,
          { mode: body.mode, from: fromEventTime?.toISOString() ?? 'beginning' },
          tx,
        ),
    );
    if (!created.ok)
      throw new CodedHttpException(
        HttpStatus.CONFLICT,
        'replay_running',
        `replay ${created.error.id} of this workspace is queued or running; one runs at a time`,
        { replayId: created.error.id },
      );
    const replay = created.value;
    try {
      await this.queue.enqueue(replay.id);
    } catch (error) {
      this.logger.warn({ err: error, replayId: replay.id }, 'could not enqueue a replay');
      await this.replays.failUnqueued(replay.id, 'could not be queued (Redis unavailable)');
      throw new ServiceUnavailableException('cannot queue work right now; try again');
    }
    this.logger.info(
      { replayId: replay.id, mode: body.mode, from: fromEventTime ?? 'beginning' },
      'replay queued',
    );
    return toView(replay, await this.labelsOf(principal, [replay]));
  }

  async get(principal: Principal, id: string): Promise<ReplayView> {
    const replay = await this.replays.find(principal.workspaceId, id);
    if (!replay) throw new NotFoundException(`no replay ${id}`);
    return toView(replay, await this.labelsOf(principal, [replay]));
  }

  async list(principal: Principal, query: ReplayListQuery): Promise<ReplayPage> {
    const rows = await this.replays.list(principal.workspaceId, {
      before: query.cursor,
      limit: query.limit + 1,
    });
    const page = toPage(rows, query.limit);
    const labels = await this.labelsOf(principal, page.rows);
    return { data: page.rows.map((row) => toView(row, labels)), nextCursor: page.nextCursor };
  }

  private labelsOf(principal: Principal, replays: readonly ReplayRecord[]): Promise<Labels> {
    return this.labels.resolve(principal.workspaceId, { actors: replays.map((r) => r.createdBy) });
  }
}

function toView(replay: ReplayRecord, labels: Labels): ReplayView {
  return {
    id: replay.id,
    mode: replay.mode as ReplayView['mode'],
    from: replay.fromEventTime === null ? 'beginning' : { eventTime: replay.fromEventTime.toISOString() },
    status: replay.status as ReplayView['status'],
    progress: { eventsTotal: replay.eventsTotal, eventsReplayed: replay.eventsReplayed },
    failureReason: replay.failureReason,
    createdAt: replay.createdAt.toISOString(),
    createdBy: { ...actorViewOf(replay.createdBy), label: labels.actor(replay.createdBy).label },
    startedAt: replay.startedAt?.toISOString() ?? null,
    finishedAt: replay.finishedAt?.toISOString() ?? null,
    report: (replay.report as ReplayView['report']) ?? null,
  };
}
