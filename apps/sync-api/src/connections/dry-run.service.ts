import {
  HttpStatus,
  Inject,
  Injectable,
  NotFoundException,
  type OnApplicationShutdown,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { ConnectionId } from '@syncline/core';
import { StagingChangeLog } from '@syncline/log';
import { computeDryRunReport } from '@syncline/workers/dry-run';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Pool as PgPool, type Pool } from 'pg';
import { AuditLogService } from '../admin/audit-log.service';
import type { Principal } from '../auth/principal';
import { CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { refusalMessage } from './connection-lifecycle';
import { ConnectionsRepository } from './connections.repository';
import type { ConnectionView } from './connections.schemas';
import { ConnectionsService } from './connections.service';
import { DryRunRepository } from './dry-run.repository';
import type { DryRunQuery, DryRunReportView } from './dry-run.schemas';

/** Injection token for the pool dry runs run on: few connections, so that reports queue instead of piling up. */
export const DRY_RUN_POOL = Symbol('DRY_RUN_POOL');

const disconnected = (id: string, action: string) =>
  new CodedHttpException(
    HttpStatus.CONFLICT,
    'connection_disconnected',
    refusalMessage('connection_disconnected', id, action),
  );

/** The dry run of a new connection: its report, and the enable that ends it. */
@Injectable()
export class DryRunService implements OnApplicationShutdown {
  constructor(
    @Inject(ConnectionsRepository) private readonly connections: ConnectionsRepository,
    @Inject(ConnectionsService) private readonly views: ConnectionsService,
    @Inject(DryRunRepository) private readonly dryRuns: DryRunRepository,
    @Inject(StagingChangeLog) private readonly log: StagingChangeLog,
    @Inject(DRY_RUN_POOL) private readonly pool: Pool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @InjectPinoLogger(DryRunService.name) private readonly logger: PinoLogger,
  ) {}

  async report(principal: Principal, id: string, query: DryRunQuery): Promise<DryRunReportView> {
    const record = await this.connections.find(principal.workspaceId, id as ConnectionId);
    if (!record) throw new NotFoundException(`no connection ${id}`);
    if (!record.dryRun)
      throw new NotFoundException(`connection ${id} is not in dry run: it has no dry-run report`);
    if (record.status === 'disconnected') throw disconnected(id, 'report a dry run');
    const started = Date.now();
    let report: Awaited<ReturnType<typeof computeDryRunReport>>;
    try {
      report = await computeDryRunReport(this.pool, id, {
        partitions: this.config.LOG_PARTITIONS,
        limit: query.limit,
      });
    } catch (error) {
      // Every connection of the pool busy with another report for the whole wait.
      if (error instanceof Error && /timeout exceeded when trying to connect/i.test(error.message))
        throw new ServiceUnavailableException('other dry runs are being computed; try again shortly');
      throw error;
    }
    this.logger.info(
      { connectionId: id, ms: Date.now() - started, staged: report.staged.changes, ...report.summary },
      'dry run computed',
    );
    return report;
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

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The pool of DRY_RUN_POOL: two connections (a report holds one for its whole transaction). */
export const dryRunPoolProvider = {
  provide: DRY_RUN_POOL,
  inject: [APP_CONFIG, PinoLogger],
  useFactory: (config: AppConfig, logger: PinoLogger): Pool => {
    logger.setContext('DryRunPool');
    const pool = new PgPool({
      connectionString: config.DATABASE_URL,
      max: 2,
      connectionTimeoutMillis: 30_000,
    });
    // An idle client losing its connection emits on the pool; unhandled it would crash the process.
    pool.on('error', (error) => logger.warn({ err: error }, 'idle postgres connection failed'));
    return pool;
  },
};
