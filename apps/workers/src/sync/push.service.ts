import { Inject, Injectable } from '@nestjs/common';
import { type ConnectorError, type PushWrite, type WriteReceipt } from '@syncline/connectors';
import { type Logger, type SourceChangeInput, storableText } from '@syncline/core';
import { APPEND_STATEMENT } from '@syncline/log';
import {
  type ClaimedOutboxRow,
  type CoalescedWrite,
  coalesce,
  recordVersionChange,
  refusedCreateChange,
} from '@syncline/sync-stage';
import type { Pool, PoolClient } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig } from '../config/workers-config';
import { type ConnectionHandle, ConnectionRuntime } from '../connections/connection-runtime';
import { IngestLog } from '../connections/ingest-log';
import { PG_POOL, ROOT_LOGGER } from '../infra/connections';
import { JobQueue } from '../jobs/job-queue.service';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { AssociationPush, isAssociation } from './association-push';
import { InsightPush, isInsightWrite } from './insight-push';
import { type ClaimedRow, claimOutbox } from './outbox-claim';
import { OutboxSweep } from './outbox-sweep';
import {
  deadLetterWrite,
  holdCreateForHolder,
  holdStaleRows,
  type Refused,
  setRefusedCreateAside,
} from './refused-writes';
import { claimChanges, receiptChanges } from './write-log';

/** Rows one claim takes; a push job claims again until the outbox is empty or its time is up. */
const CLAIM_LIMIT = 500;
/** Writes per connector call (HubSpot's batch endpoints take 100). */
const BATCH = 100;
/** A push job gives the queue back after this long and continues in the next slot. */
const JOB_BUDGET_MS = 20_000;
/** Advisory lock class for "one pusher per connection". */
const PUSH_LOCK_CLASS = 0x5e4d;

export class RetryLater extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}

const isEntityWrite = (row: ClaimedRow): row is ClaimedOutboxRow =>
  !isAssociation(row) && !isInsightWrite(row);

export interface PushOutcome {
  sent: number;
  failed: number;
  dropped: number;
  /** Creates refused because the record exists: on the log for the sync stage to settle. */
  existing: number;
  skipped?: string;
}

/** A push that sent, failed and set aside nothing (yet). */
const NOTHING: Readonly<PushOutcome> = { sent: 0, failed: 0, dropped: 0, existing: 0 };

/**
 * Writeback: sends a connection's outbox. Only one process pushes a connection at a time
 * (a session advisory lock), so rows one dead pusher left claimed can be taken back at once.
 * Rows of one target record are coalesced into one write, writes are batched into the
 * provider's batch calls, and every write leaves a receipt (its content hash and the heads it
 * carried) that turns the provider's later report of it into an echo. A write the provider
 * refuses is isolated by splitting its batch, then dead-lettered alone; the rest go on. A create
 * refused because the provider holds the record already is settled on that record instead.
 * Associations (AssociationPush) and insight properties (InsightPush) go after the records.
 */
@Injectable()
export class PushService {
  private readonly logger: Logger;
  private readonly insights: InsightPush;
  private readonly associations: AssociationPush;
  private readonly outboxSweep: OutboxSweep;
  /**
   * Connections this process is pushing now, each with whether another push was asked for
   * meanwhile: the push in progress drains again before it lets go, instead of the request
   * waiting for a later window (a push job that finds its connection busy in this process
   * used to come back 250 ms later, which was the tail of the wait from an outbox row to its
   * claim in bench e2e-latency).
   */
  private readonly pushing = new Map<string, { again: boolean }>();

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ConnectionRuntime) private readonly runtime: ConnectionRuntime,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(WorkerMetrics) private readonly metrics: WorkerMetrics,
    @Inject(IngestLog) private readonly log: IngestLog,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: PushService.name });
    this.insights = new InsightPush({
      pool,
      logger: this.logger,
      append: async (changes) => {
        const appended = await this.appendNow(changes);
        if (!appended.ok)
          throw new RetryLater(
            `could not log the receipts of the writes: ${appended.error.message}`,
            'Transient',
          );
      },
      refused: (handle, error) => this.refused(handle, error),
    });
    this.outboxSweep = new OutboxSweep(pool, this.logger, (connectionId) => this.schedule(connectionId));
    this.associations = new AssociationPush({
      pool,
      batch: BATCH,
      refused: (handle, error) => this.refused(handle, error),
      fail: (handle, write, error) => this.fail(handle, write, error),
      sent: async (handle, ops) => {
        for (const op of ops) this.metrics.pushWrites.inc({ provider: handle.provider, op });
        await this.runtime.recordSuccess(handle.id);
      },
    });
  }

  /**
   * Enqueues the push of a connection for the coalescing window now open (or `atMs`). A push
   * of it in progress in this process drains again once done instead: no job, no window.
   */
  async schedule(connectionId: string, atMs = Date.now()): Promise<void> {
    const inProgress = this.pushing.get(connectionId);
    if (inProgress !== undefined && atMs <= Date.now()) {
      inProgress.again = true;
      return;
    }
    await this.enqueue(connectionId, atMs);
  }

  private async enqueue(connectionId: string, atMs: number): Promise<void> {
    const window = Math.max(1, this.config.SYNC_COALESCE_MS);
    const slot = Math.floor(atMs / window) + 1;
    const delayMs = Math.max(0, slot * window - Date.now());
    await this.jobs.enqueue('connection.push', { connectionId, slot }, { delayMs });
  }

  async push(connectionId: string): Promise<PushOutcome> {
    const inProgress = this.pushing.get(connectionId);
    if (inProgress !== undefined) {
      inProgress.again = true;
      return { ...NOTHING, skipped: 'handed to the push in progress' };
    }
    const handle = await this.runtime.open(connectionId);
    if (handle === undefined) return { ...NOTHING, skipped: 'no such connection' };
    if (handle.status !== 'live' && handle.status !== 'backfilling')
      // Rows wait; the sweep sends them once the connection is back.
      return { ...NOTHING, skipped: `connection is ${handle.status}` };
    const lock = await this.pool.connect();
    let locked = false;
    try {
      const { rows } = await lock.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok',
        [PUSH_LOCK_CLASS, connectionId],
      );
      locked = rows[0]?.ok === true;
      if (!locked) {
        // Another process is pushing this connection; look again in the next window.
        await this.schedule(connectionId, Date.now() + 250);
        return { ...NOTHING, skipped: 'another pusher holds the connection' };
      }
      // A push asked for while this one ran drains again here. The entry is removed in the
      // same synchronous step as the last look at `again`, so a request either finds it (and
      // is served by a further drain) or does not (and takes the lock itself, or comes back if
      // the unlock is still on its way).
      const state = { again: false };
      this.pushing.set(connectionId, state);
      try {
        const total: PushOutcome = { ...NOTHING };
        for (;;) {
          const outcome = await this.drain(handle);
          total.sent += outcome.sent;
          total.failed += outcome.failed;
          total.dropped += outcome.dropped;
          total.existing += outcome.existing;
          // Stopped short of an empty outbox (credentials refused, or its time budget used and a
          // continuation enqueued): nothing more to do here.
          if (!state.again || !outcome.drained) return total;
          state.again = false;
        }
      } finally {
        this.pushing.delete(connectionId);
      }
    } finally {
      if (locked)
        await lock.query('SELECT pg_advisory_unlock($1, hashtext($2))', [PUSH_LOCK_CLASS, connectionId]);
      lock.release();
    }
  }

  /**
   * Sends what the outbox held when it began, until a claim finds nothing more of it
   * (`drained`), its time budget is used, or credentials are refused. Rows queued since come
   * with the push their queueing asked for (in this process: the drain again, at once), so a
   * push held back while the sync stage is behind (PushHold) is not sent by one in progress.
   */
  private async drain(handle: ConnectionHandle): Promise<PushOutcome & { drained: boolean }> {
    const outcome = { ...NOTHING, drained: false };
    const started = Date.now();
    const upTo = await lastOutboxId(this.pool);
    for (;;) {
      const {
        rows: claimed,
        linked,
        versions,
        outdated,
      } = await claimOutbox(this.pool, handle.id, CLAIM_LIMIT, this.config.INSIGHT_WRITE_PERIOD_MS, upTo);
      outcome.dropped += outdated;
      // Only rows set aside as out of date: the claim goes on to the rows after them.
      if (claimed.length === 0 && outdated > 0) continue;
      if (claimed.length === 0) {
        outcome.drained = true;
        return outcome;
      }
      const rows = claimed.filter(isEntityWrite);
      const { writes, dropped } = coalesce(rows, linked);
      for (const write of writes) {
        const version = versions.get(write.entityId);
        // A merge is not computed from values, and names its records itself.
        if (write.op !== 'create' && write.op !== 'merge' && version) write.expectedVersion = version;
      }
      if (dropped.length > 0) {
        await this.pool.query(`UPDATE outbox SET status = 'superseded' WHERE id = ANY($1::bigint[])`, [
          dropped,
        ]);
        outcome.dropped += dropped.length;
      }
      try {
        await this.claimOnLog(handle, writes, claimed);
      } catch (error) {
        await this.releaseRows(claimed.map((r) => r.id));
        throw error;
      }
      for (let i = 0; i < writes.length; i += BATCH) {
        try {
          await this.send(handle, writes.slice(i, i + BATCH), outcome);
        } catch (error) {
          // Unsent rows go back to pending; the retry (or the sweep) takes them again.
          await this.release(writes.slice(i));
          // The claimed associations wait with them.
          await this.releaseRows(claimed.filter(isAssociation).map((r) => r.id));
          // Without credentials nothing can be sent; the rows wait for new ones (not a failure).
          if (error instanceof RetryLater && error.code === 'AuthRevoked') return outcome;
          throw error;
        }
      }
      // Associations after the records: a create above is linked by now, and its association goes.
      const associations = claimed.filter(isAssociation);
      if (associations.length > 0) {
        try {
          await this.associations.send(handle, associations, outcome);
        } catch (error) {
          await this.releaseRows(associations.map((r) => r.id));
          if (error instanceof RetryLater && error.code === 'AuthRevoked') return outcome;
          throw error;
        }
      }
      // A record's insight properties: no field of it, sent on their own.
      const insights = claimed.filter(isInsightWrite);
      if (insights.length > 0) {
        try {
          outcome.sent += await this.insights.send(handle, insights);
        } catch (error) {
          await this.releaseRows(insights.map((r) => r.id));
          if (error instanceof RetryLater && error.code === 'AuthRevoked') return outcome;
          throw error;
        }
      }
      if (Date.now() - started > JOB_BUDGET_MS) {
        // A job of its own: the queue's other work goes first.
        await this.enqueue(handle.id, Date.now());
        return outcome;
      }
    }
  }

  /**
   * Counts a provider's refusal, and throws what the job retries (rate limited, transient, or
   * credentials refused, which also sets the connection to needs_reauth); any other refusal is
   * about the writes themselves and returns for the caller to isolate.
   */
  private async refused(handle: ConnectionHandle, error: ConnectorError): Promise<void> {
    this.metrics.pushErrors.inc({ provider: handle.provider, code: error.code });
    await this.runtime.recordError(handle.id, error.code);
    switch (error.code) {
      case 'RateLimited':
        this.metrics.rateLimited.inc({ provider: handle.provider });
        throw new RetryLater(`rate limited by ${handle.provider}: ${error.message}`, error.code);
      case 'Transient':
        throw new RetryLater(`${handle.provider} push failed: ${error.message}`, error.code);
      case 'AuthRevoked':
        await this.runtime.setStatus(handle.id, 'needs_reauth', error.message);
        throw new RetryLater(`credentials refused: ${error.message}`, error.code);
    }
  }

  /**
   * Puts the updates about to be sent on the log as claims (write-log.ts), before any is
   * sent: the provider's report of a write may reach the log before its receipt, and the
   * sync stage, folding the claim first on the record's partition, knows it for our echo.
   */
  private async claimOnLog(
    handle: ConnectionHandle,
    writes: readonly CoalescedWrite[],
    claimed: readonly ClaimedRow[],
  ): Promise<void> {
    const changes = claimChanges(handle.id, writes, claimed, new Date());
    if (changes.length === 0) return;
    const appended = await this.appendNow(changes);
    if (!appended.ok)
      throw new RetryLater(`could not log the claims of the writes: ${appended.error.message}`, 'Transient');
  }

  /**
   * Appends in a statement of its own, past the micro-batcher (which would queue the push
   * stage's events behind ingest), holding the heads of its partitions (which every other
   * append waits for) no longer than it runs.
   */
  private appendNow(changes: readonly SourceChangeInput[]) {
    // Named as the log's own appends are: planned once per connection.
    return this.log.appendWithin(
      async (sql, params) =>
        (await this.pool.query({ name: APPEND_STATEMENT, text: sql, values: params })).rows,
      changes,
    );
  }

  private async release(writes: readonly CoalescedWrite[]): Promise<void> {
    await this.releaseRows(writes.flatMap((w) => w.rowIds));
  }

  private async releaseRows(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE outbox SET status = 'pending', claimed_at = NULL WHERE id = ANY($1::bigint[]) AND status = 'sending'`,
      [ids],
    );
  }

  private async send(
    handle: ConnectionHandle,
    writes: CoalescedWrite[],
    outcome: PushOutcome,
  ): Promise<void> {
    if (writes.length === 0) return;
    const calls: PushWrite[] = writes.map((w) => ({
      op: w.op,
      entityType: w.entityType,
      ...(w.externalId === null ? {} : { externalId: w.externalId }),
      ...(w.mergedExternalId === undefined ? {} : { mergedExternalId: w.mergedExternalId }),
      ...(w.afterProviderMerge ? { afterProviderMerge: true } : {}),
      fields: w.fields,
      idempotencyKey: w.idempotencyKey,
      entityId: w.entityId,
      ...(w.expectedVersion ? { expectedVersion: w.expectedVersion } : {}),
    }));
    const sentAt = new Date();
    const result = await handle.connector.push(handle.ctx, calls);
    if (result.ok) {
      await this.recordSent(handle, writes, result.value, sentAt);
      outcome.sent += writes.length;
      for (const w of writes) this.metrics.pushWrites.inc({ provider: handle.provider, op: w.op });
      await this.runtime.recordSuccess(handle.id);
      return;
    }
    const error = result.error;
    await this.refused(handle, error);
    // A create refused because a record of the provider's own already holds its unique value
    // (HubSpot's "already exists"), the record named: settled on that record, the rest sent again.
    const existing = error.existing;
    const refusedCreate =
      error.code === 'Conflict' && existing !== undefined
        ? writes.find((w) => w.op === 'create' && w.idempotencyKey === existing.idempotencyKey)
        : undefined;
    if (existing !== undefined && refusedCreate !== undefined) {
      const refusal = `${error.code}: ${storableText(error.message)}`.slice(0, 2_000);
      if (
        await holdCreateForHolder(this.pool, handle.id, refusedCreate, existing.record.externalId, refusal)
      ) {
        outcome.dropped++;
        await this.schedule(handle.id, Date.now() + 1_000);
      } else await this.settleExisting(handle, refusedCreate, existing.record, error, outcome);
      await this.send(
        handle,
        writes.filter((w) => w !== refusedCreate),
        outcome,
      );
      return;
    }
    // The provider named the writes at fault (a stale version, a record gone). A Conflict
    // without them is not about versions ("already exists" in a batch of several): it is
    // isolated below, where a create's refusal names its record (above) and anything else is
    // dead-lettered like any refused write.
    const atFault = error.failedKeys ?? [];
    if ((error.code === 'Conflict' || error.code === 'NotFound') && atFault.length > 0) {
      await this.setAside(handle, writes, new Set(atFault), error, outcome);
      return;
    }
    // Otherwise one write is at fault somewhere: split the batch until it stands alone,
    // then dead-letter it and send the rest.
    if (writes.length > 1) {
      const half = Math.ceil(writes.length / 2);
      await this.send(handle, writes.slice(0, half), outcome);
      await this.send(handle, writes.slice(half), outcome);
      return;
    }
    await this.fail(handle, writes[0]!, error);
    outcome.failed++;
  }

  /**
   * Writes the provider refused as a whole batch for a few of them: a record changed since we
   * last saw it (Conflict: set the write aside and pull the connection; the sync stage owes it
   * again, recomputed, once the newer edit is merged) or gone (NotFound: dead-lettered). The
   * rest of the batch is sent again at once.
   */
  private async setAside(
    handle: ConnectionHandle,
    writes: readonly CoalescedWrite[],
    keys: ReadonlySet<string>,
    error: ConnectorError,
    outcome: PushOutcome,
  ): Promise<void> {
    const atFault = writes.filter((w) => keys.has(w.idempotencyKey));
    const rest = writes.filter((w) => !keys.has(w.idempotencyKey));
    if (error.code === 'Conflict') {
      await holdStaleRows(
        this.pool,
        atFault.flatMap((w) => w.rowIds),
        `Conflict: ${error.message}`,
      );
      outcome.dropped += atFault.length;
      // The refused rows' next claim is a second later per attempt; the sweep also comes back.
      await this.schedule(handle.id, Date.now() + 1_000);
      // What the provider holds now goes on the log: merged, it updates the record's version
      // and makes the sync stage owe the write again, recomputed. Without it, a pull.
      const current = error.current;
      if (current && current.length > 0) {
        const appended = await this.log.append(current);
        if (!appended.ok)
          throw new RetryLater(`could not log the current records: ${appended.error.message}`, 'Transient');
        // Those on the log already: their version goes on the log after them, for the sync stage
        // to leave on the link once it merged them (a receipt of an older write may have left an
        // older one there since).
        const versions = current.flatMap((c, i) =>
          appended.value[i]?.isNew === false && c.providerVersion
            ? [recordVersionChange(c, c.eventKey, c.providerVersion)]
            : [],
        );
        if (versions.length > 0) {
          const logged = await this.log.append(versions);
          if (!logged.ok)
            throw new RetryLater(`could not log the current versions: ${logged.error.message}`, 'Transient');
        }
      } else {
        await this.jobs.enqueue('connection.pull', {
          connectionId: handle.id,
          reason: 'stale write refused',
        });
      }
    } else {
      for (const write of atFault) {
        await this.fail(handle, write, error);
        outcome.failed++;
      }
    }
    await this.send(handle, rest, outcome);
  }

  /**
   * A create the provider refused because `record`, one of its own, already holds the write's
   * unique value (ConnectorError.existing): not a dead letter. Two events go on the record's
   * partition: the refusal (`existing`), which the sync stage folds into a link, a review or
   * nothing (judgeExistingRecord, on the links as the log leaves them there), and the record's
   * own values, as a pull of its version reports them (the same event key), merged after it:
   * into the entity once linked, as any record of it. The rows are set aside meanwhile.
   */
  private async settleExisting(
    handle: ConnectionHandle,
    write: CoalescedWrite,
    record: SourceChangeInput,
    error: ConnectorError,
    outcome: PushOutcome,
  ): Promise<void> {
    const refusal = `${error.code}: ${error.message}`;
    const refused = refusedCreateChange(
      {
        workspaceId: write.workspaceId,
        connectionId: handle.id,
        entityType: write.entityType,
        externalId: record.externalId,
      },
      {
        idempotencyKey: write.idempotencyKey,
        entityId: write.entityId,
        fields: write.fields,
        // A provider's message may quote what PostgreSQL cannot hold (storableText).
        refusal: storableText(refusal).slice(0, 2_000),
        record: { fields: record.fields ?? {}, ...(record.origin ? { origin: record.origin } : {}) },
        refusedAt: new Date().toISOString(),
      },
    );
    const appended = await this.appendNow([refused, record]);
    // Not on the log: the row is still `sending`, taken back and sent again (refused again) later.
    if (!appended.ok)
      throw new RetryLater(`could not log the refused create: ${appended.error.message}`, 'Transient');
    await setRefusedCreateAside(
      this.pool,
      write,
      `${refusal} (the sync stage settles it on record ${record.externalId})`,
    );
    outcome.existing++;
    this.logger.info(
      { connectionId: handle.id, entityId: write.entityId, externalId: record.externalId },
      'create refused: the provider holds the record already; settled by the sync stage',
    );
  }

  /**
   * The provider took the writes: their receipts go on the log (write-events.ts), where the
   * sync stage folds them in order with the records' reports (the receipt, the link of a
   * record we created, the version our write left, the associations waiting for it, the rows
   * sent). A pusher that dies before the receipts are on the log sends the rows again under
   * their keys.
   */
  private async recordSent(
    handle: ConnectionHandle,
    writes: readonly CoalescedWrite[],
    receipts: readonly WriteReceipt[],
    sentAt: Date,
  ): Promise<void> {
    const changes = receiptChanges(handle.id, writes, receipts, sentAt);
    if (changes.length > 0) {
      const appended = await this.appendNow(changes);
      if (!appended.ok)
        throw new RetryLater(
          `could not log the receipts of the writes: ${appended.error.message}`,
          'Transient',
        );
    }
    // Then the rows, in a statement of their own: the sync stage may hold them until its batch
    // commits. A pusher that dies between the two leaves the receipts' rows to the fold of the
    // receipts, which marks them sent too; the rest (deletes, merges without a version) it
    // sends again under their keys.
    await this.pool.query(`UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = ANY($1::bigint[])`, [
      writes.flatMap((w) => w.rowIds),
    ]);
  }

  private async fail(handle: ConnectionHandle, write: Refused, error: ConnectorError): Promise<void> {
    this.logger.warn(
      { connectionId: handle.id, entityId: write.entityId, code: error.code, err: error.message },
      'write refused by the provider; dead-lettered',
    );
    await deadLetterWrite(this.pool, handle.id, write, error);
  }

  /** Connections with rows pending (or claimed by a pusher that died): push them again (OutboxSweep). */
  sweep(): Promise<number> {
    return this.outboxSweep.sweep();
  }
}

/** The id of the outbox's latest row (0 before the first). */
async function lastOutboxId(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT CASE WHEN is_called THEN last_value ELSE 0 END::text AS id FROM outbox_id_seq`,
  );
  return rows[0]?.id ?? '0';
}

/** For tests and callers that hold a pool client: whether an outbox is empty. */
export async function pendingWrites(client: Pool | PoolClient, connectionId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE connection_id = $1 AND status IN ('pending', 'sending')`,
    [connectionId],
  );
  return rows[0]?.n ?? 0;
}
