import { Inject, Injectable } from '@nestjs/common';
import type { ConnectorError, Cursor, PullPage } from '@syncline/connectors';
import type { Logger, SourceChangeInput } from '@syncline/core';
import { type JobPayload, PullRequests, pullJobIds } from '@syncline/jobs';
import { APPEND_BATCH_ROWS } from '@syncline/log';
import { watermarkChanges } from '@syncline/sync-stage';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import {
  type ConnectionCursors,
  type ConnectionHandle,
  ConnectionRuntime,
  type ConnectionStatus,
} from '../connections/connection-runtime';
import { IngestLog } from '../connections/ingest-log';
import { PG_POOL, REDIS, ROOT_LOGGER } from '../infra/connections';
import { JobQueue } from '../jobs/job-queue.service';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { RENEWED_PROVIDERS, RenewService } from '../renew/renew.service';
import { PermanentConnectorError, RetryableConnectorError } from './connector-job-errors';

const JOB = 'connection.pull';
/** Longest a job waits in-process for a provider's retry-after before handing the wait to BullMQ. */
const MAX_RATE_LIMIT_WAIT_MS = 30_000;
const ENQUEUE_BATCH = 500;
/**
 * A connection's watermark goes on the log when it has moved this far since the last one this
 * process appended: the windows close by days, so a finer step would only grow the log (every
 * round of a watched mailbox has a new watermark). connection.watermark keeps the latest.
 */
export const WATERMARK_STEP_MS = 15 * 60_000;
/** The reasons of the pulls the workers ask for themselves: the fallback schedule and a continuation. */
const SCHEDULED = 'scheduled';
const CONTINUATION = 'continuation';

/** Pages read and not yet on the log, and where the connection stands after them. */
interface HeldPages {
  changes: SourceChangeInput[];
  next: { status: ConnectionStatus; cursors: ConnectionCursors };
  /** Changes of backfill pages (the connection's backfill progress). */
  backfillSeen: number;
  estimatedTotal?: number;
  watermark?: Date;
  /** An incremental page among them: the connection was pulled. */
  pulled: boolean;
}

/** The held pages with one more, held in place (a first page starts them). */
function holdPage(
  held: HeldPages | undefined,
  page: PullPage,
  next: HeldPages['next'],
  backfilling: boolean,
): HeldPages {
  const into = held ?? { changes: [], next, backfillSeen: 0, pulled: false };
  for (const change of page.changes) into.changes.push(change);
  into.next = next;
  if (backfilling) {
    into.backfillSeen += page.changes.length;
    into.estimatedTotal = page.progress?.estimatedTotal ?? into.estimatedTotal;
  } else into.pulled = true;
  into.watermark = page.watermark ?? into.watermark;
  return into;
}

export type PullOutcome =
  | { outcome: 'skipped'; reason: string }
  /** `rounds` > 1: pulls were asked for while this one ran, and it read again for them. */
  | { outcome: 'caught-up'; pages: number; changes: number; status: 'live'; rounds: number }
  | { outcome: 'continued'; pages: number; changes: number; next: string }
  | { outcome: 'superseded'; pages: number; changes: number }
  | { outcome: 'needs-reauth'; reason: string };

const SKIPPED_STATUSES: ReadonlySet<ConnectionStatus> = new Set([
  'paused',
  'disconnected',
  'needs_reauth',
  'error',
]);

/**
 * Reads one connection into the log: its backfill while `backfilling`, then incremental
 * pulls while `live`, page by page. Pages are appended to the log first, up to
 * APPEND_BATCH_ROWS changes at once, and only then their cursor stored, so a crash between the
 * two re-reads them (the log drops the repeats by event key) and never skips one.
 *
 * Every cursor write is a compare-and-set on (status, cursors): if another pull of the
 * same connection moved the cursor, or the API paused it meanwhile, this one stops.
 *
 * One job is bounded by PULL_JOB_MAX_PAGES and PULL_JOB_BUDGET_MS. The job's own id
 * (`pull.<id>`) is held while it runs, so enqueueing it again would be dropped: the job
 * hands over to `pull.<id>.next` instead, and that one back to `pull.<id>`. If the other id
 * is already pending (a scheduled or webhook pull), the enqueue joins it, which continues
 * the work just as well.
 *
 * A pull asked for while this job runs (a Calendar/Gmail notification: the API's add of
 * `pull.<id>` is dropped as a duplicate) is not lost: the API also leaves a request (see
 * PullRequests), which this job takes once caught up and reads again for.
 */
@Injectable()
export class PullService {
  private readonly logger: Logger;
  private readonly requests: PullRequests;
  /** Per connection, the last watermark this process put on the log (epoch ms). */
  private readonly loggedMarks = new Map<string, number>();

  constructor(
    @Inject(ConnectionRuntime) private readonly runtime: ConnectionRuntime,
    @Inject(IngestLog) private readonly log: IngestLog,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(RenewService) private readonly subscriptions: RenewService,
    @Inject(REDIS) redis: Redis,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: PullService.name });
    this.requests = new PullRequests(redis, config.REDIS_PREFIX);
  }

  async pull(
    connectionId: string,
    jobId: string = pullJobIds(connectionId).primary,
    reason?: string,
  ): Promise<PullOutcome> {
    const handle = await this.runtime.open(connectionId);
    if (handle === undefined) return this.skip(connectionId, 'no such connection');
    if (SKIPPED_STATUSES.has(handle.status)) return this.skip(connectionId, `status ${handle.status}`);
    if (!handle.hasCredentials) return this.skip(connectionId, 'no credentials');
    if (!handle.accountProven) {
      const refused = await this.proveAccount(handle);
      if (refused !== undefined) return refused;
    }

    let status = handle.status;
    let cursors = handle.cursors;
    if (status === 'pending') {
      const started = await this.pool.query(
        `UPDATE connection SET status = 'backfilling', status_reason = NULL, backfill_seen = 0,
                backfill_total = NULL, updated_at = now()
          WHERE id = $1 AND status = 'pending'`,
        [connectionId],
      );
      if (started.rowCount === 0) return this.skip(connectionId, 'status changed while starting');
      status = 'backfilling';
      this.logger.info({ connectionId, provider: handle.provider }, 'backfill started');
    }

    await this.requests.started(connectionId, jobId);
    // Watched before the first read, so every change after it is pushed: a pull asked for from
    // outside (a new connection, new credentials, a resume, a resync, a notification) makes sure
    // of the push subscription. Scheduled pulls and continuations leave a refused subscription to
    // the renewal job (every 10 minutes) rather than ask the provider again on every pull.
    if (reason !== SCHEDULED && reason !== CONTINUATION) await this.watch(handle);
    // A subscription the provider ended or asked to renew (a Graph lifecycle event marks it due
    // now) is made again by the next pull, whatever asked for it: the notification's own pull may
    // have been folded into one already running.
    else if (RENEWED_PROVIDERS.includes(handle.provider) && (await this.subscriptionLapsed(handle.id)))
      await this.watch(handle);
    const deadline = Date.now() + this.config.PULL_JOB_BUDGET_MS;
    let rounds = 1;
    let pages = 0;
    let changes = 0;
    let resyncs = 0;
    // Pages read but not yet on the log: appended together (and their cursor stored after them)
    // once they hold APPEND_BATCH_ROWS changes, at the end of a round, or before the job stops.
    // One INSERT of 500 costs the log about half what ten of 50 do; a crash re-reads them.
    let held: HeldPages | undefined;
    const take = async (): Promise<PullOutcome | undefined> => {
      if (held === undefined) return undefined;
      const taken = held;
      held = undefined;
      // A watermark goes on the log after the pages it vouches for.
      const mark = taken.watermark?.getTime();
      const logged = this.loggedMarks.get(connectionId);
      const logMark = mark !== undefined && (logged === undefined || mark - logged >= WATERMARK_STEP_MS);
      const appended = await this.log.append(
        logMark ? [...taken.changes, ...watermarkChanges(handle, taken.watermark!)] : taken.changes,
      );
      if (logMark && appended.ok) this.loggedMarks.set(connectionId, mark);
      if (!appended.ok) {
        // The connector produced a change the log refuses: a bug to fix, not to retry.
        const message = `log refused a page: ${appended.error.message}`;
        await this.runtime.recordError(connectionId, 'Validation');
        await this.runtime.setStatus(connectionId, 'error', message);
        throw new PermanentConnectorError('Validation', message);
      }
      // Syncline's properties are in place before the connection is live: its reconcile, and
      // any write of insights to it, come after.
      if (status === 'backfilling' && taken.next.status === 'live') await this.makeInsightProperties(handle);
      const committed = await this.commitPages(connectionId, status, cursors, taken);
      if (!committed) {
        this.logger.info({ connectionId, pages }, 'another pull moved this connection on; stopping');
        return { outcome: 'superseded', pages, changes };
      }
      changes += taken.changes.length;
      this.metrics.pullChanges.inc({ provider: handle.provider }, taken.changes.length);
      if (status === 'backfilling' && taken.next.status === 'live') {
        this.logger.info({ connectionId, provider: handle.provider, pages }, 'backfill finished; live');
        // Live: watched if not yet (a refusal at the start, a backfill begun by a scheduled pull).
        // The incremental read that follows covers what changed before the watch opened.
        await this.watch(handle);
      }
      status = taken.next.status;
      cursors = taken.next.cursors;
      return undefined;
    };
    // Where the next read starts: after the last page read, whose cursor may not be stored yet.
    let position: HeldPages['next'] = { status, cursors };
    // An append of held pages under way while the next page is read (never two at once: each
    // stores its cursor over the one before).
    let taking: Promise<PullOutcome | undefined> | undefined;
    const settle = async (): Promise<PullOutcome | undefined> => {
      const stopped = await taking;
      taking = undefined;
      return stopped ?? (await take());
    };
    for (;;) {
      if (pages >= this.config.PULL_JOB_MAX_PAGES || Date.now() >= deadline) {
        const stopped = await settle();
        if (stopped) return stopped;
        const next = await this.handOver(connectionId, jobId);
        this.logger.info({ connectionId, pages, changes, status, next }, 'pull continues in another job');
        return { outcome: 'continued', pages, changes, next };
      }
      const backfilling = position.status === 'backfilling';
      await this.requests.beforePage(connectionId);
      const cursor: Cursor = (backfilling ? position.cursors.backfill : position.cursors.live) ?? {};
      const read = backfilling
        ? handle.connector.backfill(handle.ctx, cursor)
        : handle.connector.pull(handle.ctx, cursor);
      const [result, stopped] = await Promise.all([read, taking]);
      taking = undefined;
      pages++;
      if (stopped) return stopped;

      if (!result.ok) {
        // What was read before the failure is good: on the log first, its cursor stored.
        const stopped = await take();
        if (stopped) return stopped;
        const error = result.error;
        await this.noteError(handle, error);
        if (error.code === 'CursorInvalid' && resyncs === 0) {
          resyncs++;
          const reset = await this.resetToBackfill(handle, status, cursors, error);
          if (!reset) return { outcome: 'superseded', pages, changes };
          status = 'backfilling';
          cursors = reset;
          position = { status, cursors };
          continue;
        }
        return this.fail(handle, error);
      }

      const page = result.value;
      // An admin may have paused (or disconnected, or resynced) it while the page was being
      // read: then nothing of the pages held is taken in, and the cursor stays where it was, so
      // a resume reads them again.
      if (!(await this.stillAt(connectionId, status, cursors))) {
        this.logger.info({ connectionId, pages }, 'connection changed while its page was read; page dropped');
        return { outcome: 'superseded', pages, changes };
      }
      position = this.nextState(position.status, position.cursors, page);
      held = holdPage(held, page, position, backfilling);
      if (!page.done) {
        // Appended while the next page is read: the provider's time and the log's overlap.
        if (held.changes.length >= APPEND_BATCH_ROWS) taking = take();
        continue;
      }
      const done = await take();
      if (done) return done;
      if (!backfilling) {
        if (await this.requests.caughtUp(connectionId, jobId)) {
          // Asked for since this round began: the change may be behind what it read.
          rounds++;
          this.logger.info({ connectionId, pages, rounds }, 'pull requested while running; reading again');
          continue;
        }
        return { outcome: 'caught-up', pages, changes, status: 'live', rounds };
      }
    }
  }

  /**
   * A connection stored before accounts were proven reads nothing until the provider names the
   * account of its credentials as its own. Another account (or none named) stops it at
   * `needs_reauth` until an admin gives credentials the API proves; undefined: proven, go on.
   */
  private async proveAccount(handle: ConnectionHandle): Promise<PullOutcome | undefined> {
    const { id: connectionId, provider } = handle;
    const proven = await this.runtime.proveAccount(handle);
    let reason: string;
    if (!proven.ok) {
      if (proven.error.code !== 'Validation') {
        await this.noteError(handle, proven.error);
        return this.fail(handle, proven.error);
      }
      reason = `its credentials do not name their account (${proven.error.message}); replace them`;
    } else if (proven.value.proven) {
      this.logger.info({ connectionId, provider }, 'account proven by its credentials');
      return undefined;
    } else {
      reason = `its credentials open ${provider} account ${proven.value.accountId}, not ${handle.ctx.externalAccountId}; replace them`;
    }
    await this.runtime.recordError(connectionId, 'Validation');
    await this.runtime.setStatus(connectionId, 'needs_reauth', reason);
    this.logger.warn({ connectionId, provider, reason }, 'account not proven; needs re-authorisation');
    return { outcome: 'needs-reauth', reason };
  }

  /** Enqueues a pull of every pending, backfilling or live connection; returns how many. */
  async enqueueAll(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM connection WHERE status IN ('pending', 'backfilling', 'live') AND provider <> 'syncline' ORDER BY id`,
    );
    const queue = this.jobs.queueOf(JOB);
    for (let at = 0; at < rows.length; at += ENQUEUE_BATCH) {
      await queue.addBulk(
        rows.slice(at, at + ENQUEUE_BATCH).map(({ id }) => {
          const data: JobPayload<typeof JOB> = { connectionId: id, reason: SCHEDULED };
          return { name: JOB, data, opts: this.jobs.jobOptions(JOB, data) };
        }),
      );
    }
    return rows.length;
  }

  /** Whether the connection has a push subscription that is no longer in force (its row is due). */
  private async subscriptionLapsed(connectionId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'SELECT 1 FROM push_subscription WHERE connection_id = $1 AND expires_at <= now() LIMIT 1',
      [connectionId],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Opens the connection's push subscription if its provider has one and it has none lasting (never throws). */
  /**
   * Syncline's own properties in a CRM (activity insights: INSIGHT_PROPERTIES) are made when
   * its backfill is in, before it goes live, so before any of its records is owed them. Not in
   * dry run: nothing is written to such a connection. A refusal is only logged: the first
   * write of the properties makes them again (InsightPush).
   */
  private async makeInsightProperties(handle: ConnectionHandle): Promise<void> {
    if (handle.connector.ensureInsightProperties === undefined) return;
    const { rows } = await this.pool.query<{ dry_run: boolean }>(
      'SELECT dry_run FROM connection WHERE id = $1',
      [handle.id],
    );
    if (rows[0]?.dry_run !== false) return;
    const made = await handle.connector.ensureInsightProperties(handle.ctx);
    if (made.ok)
      this.logger.info(
        { connectionId: handle.id, created: made.value.created.length },
        'insight properties in place',
      );
    else
      this.logger.warn(
        { connectionId: handle.id, code: made.error.code, err: made.error.message },
        'insight properties not made; the first write of them makes them',
      );
  }

  private async watch(handle: ConnectionHandle): Promise<void> {
    if (RENEWED_PROVIDERS.includes(handle.provider)) await this.subscriptions.ensure(handle.id);
  }

  private skip(connectionId: string, reason: string): PullOutcome {
    this.logger.info({ connectionId, reason }, 'pull skipped');
    return { outcome: 'skipped', reason };
  }

  /** The status and cursors after a page, per the state machine. */
  private nextState(
    status: ConnectionStatus,
    cursors: ConnectionCursors,
    page: PullPage,
  ): { status: ConnectionStatus; cursors: ConnectionCursors } {
    if (status !== 'backfilling') return { status, cursors: { ...cursors, live: page.cursor } };
    if (!page.done) return { status, cursors: { ...cursors, backfill: page.cursor } };
    // Every connector's final backfill cursor is where its incremental pulls start.
    const { backfill: _done, ...rest } = cursors;
    return { status: 'live', cursors: { ...rest, live: page.cursor } };
  }

  /** Whether the connection is still in the state this pull read it in (commitPages' condition). */
  private async stillAt(
    connectionId: string,
    status: ConnectionStatus,
    cursors: ConnectionCursors,
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'SELECT 1 FROM connection WHERE id = $1 AND status = $2::connection_status AND cursors = $3::jsonb',
      [connectionId, status, JSON.stringify(cursors)],
    );
    return rowCount === 1;
  }

  /** Stores the held pages' cursor (and progress) if nobody else moved the connection meanwhile. */
  private async commitPages(
    connectionId: string,
    status: ConnectionStatus,
    before: ConnectionCursors,
    held: HeldPages,
  ): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE connection
          SET cursors = $4::jsonb,
              status = $5::connection_status,
              status_reason = CASE WHEN $5::text = $2::text THEN status_reason ELSE NULL END,
              backfill_seen = backfill_seen + $6::int,
              backfill_total = COALESCE($7::int, backfill_total),
              watermark = COALESCE($8::timestamptz, watermark),
              last_pull_at = CASE WHEN $9::boolean THEN now() ELSE last_pull_at END,
              last_success_at = now(),
              last_error_code = NULL,
              updated_at = now()
        WHERE id = $1 AND status = $2::connection_status AND cursors = $3::jsonb`,
      [
        connectionId,
        status,
        JSON.stringify(before),
        JSON.stringify(held.next.cursors),
        held.next.status,
        held.backfillSeen,
        held.estimatedTotal ?? null,
        held.watermark ?? null,
        held.pulled,
      ],
    );
    return result.rowCount === 1;
  }

  /** The cursor expired: drop it and backfill again (event keys and identity links keep it duplicate-free). */
  private async resetToBackfill(
    handle: ConnectionHandle,
    status: ConnectionStatus,
    before: ConnectionCursors,
    error: ConnectorError,
  ): Promise<ConnectionCursors | undefined> {
    const { backfill: _b, live: _l, ...rest } = before;
    const result = await this.pool.query(
      `UPDATE connection
          SET cursors = $4::jsonb, status = 'backfilling', status_reason = $5,
              backfill_seen = 0, backfill_total = NULL, updated_at = now()
        WHERE id = $1 AND status = $2::connection_status AND cursors = $3::jsonb`,
      [handle.id, status, JSON.stringify(before), JSON.stringify(rest), `full resync: ${error.message}`],
    );
    if (result.rowCount !== 1) return undefined;
    this.logger.warn(
      { connectionId: handle.id, provider: handle.provider, reason: error.message },
      'cursor invalid; full resync',
    );
    return rest;
  }

  private async noteError(handle: ConnectionHandle, error: ConnectorError): Promise<void> {
    this.metrics.connectorErrors.inc({ provider: handle.provider, code: error.code });
    if (error.code === 'RateLimited') this.metrics.rateLimited.inc({ provider: handle.provider });
    await this.runtime.recordError(handle.id, error.code);
  }

  /** Decides from the code alone: re-auth, retry, or dead-letter. */
  private async fail(handle: ConnectionHandle, error: ConnectorError): Promise<PullOutcome> {
    const fields = {
      connectionId: handle.id,
      provider: handle.provider,
      code: error.code,
      error: error.message,
    };
    switch (error.code) {
      case 'AuthRevoked':
        // The cursor stays: once the API stores new credentials and resets the status, the
        // next pull resumes where this one stopped.
        await this.runtime.setStatus(handle.id, 'needs_reauth', error.message);
        this.logger.warn(fields, 'credentials refused; connection needs re-authorisation');
        return { outcome: 'needs-reauth', reason: error.message };
      case 'RateLimited': {
        const waitMs = Math.min(error.retryAfterMs ?? 0, MAX_RATE_LIMIT_WAIT_MS);
        this.logger.warn({ ...fields, waitMs }, 'rate limited; retrying after the provider wait');
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        throw new RetryableConnectorError('RateLimited', error.message);
      }
      case 'Validation':
      case 'NotFound':
        await this.runtime.setStatus(handle.id, 'error', `${error.code}: ${error.message}`);
        this.logger.error(fields, 'pull failed for good; connection marked error');
        throw new PermanentConnectorError(error.code, error.message);
      default:
        // Transient, Conflict, and a second CursorInvalid in one job: a later attempt may pass.
        this.logger.warn(fields, 'pull failed; will retry');
        throw new RetryableConnectorError(error.code, error.message);
    }
  }

  /** Enqueues the continuation under the id this job does not hold; returns that id. */
  private async handOver(connectionId: string, jobId: string): Promise<string> {
    const ids = pullJobIds(connectionId);
    const next = jobId === ids.primary ? ids.continuation : ids.primary;
    const data: JobPayload<typeof JOB> = { connectionId, reason: CONTINUATION };
    await this.jobs.queueOf(JOB).add(JOB, data, { ...this.jobs.jobOptions(JOB, data), jobId: next });
    return next;
  }
}
