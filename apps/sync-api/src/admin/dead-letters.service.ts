import {
  ConflictException,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { err, ok, type Result } from '@syncline/core';
import { ChangeLog } from '@syncline/log';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import type { Db } from './audit-log.repository';
import { AuditLogService } from './audit-log.service';
import {
  type DeadLetterRecord,
  DeadLettersRepository,
  type DeadLetterWithPayload,
  type SettleError,
} from './dead-letters.repository';
import type {
  BulkDeadLettersBody,
  BulkDeadLettersView,
  BulkOutcome,
  DeadLetterDetailView,
  DeadLetterListQuery,
  DeadLetterPage,
  DeadLetterView,
  RetriedView,
  RetryOutcome,
} from './dead-letters.schemas';
import { toPage } from './page-cursor';

/** Why a retry was refused, beyond the letter not being there or not open. */
type RetryRefusal =
  | { code: 'not_retryable'; source: string }
  | { code: 'unreadable_payload'; reason: string }
  | { code: 'refused_by_log'; reason: string };

/** A `log` letter's payload: the LogEvent as the consumer group stored it (JSON). */
const loggedEvent = z.object({
  connectionId: z.string(),
  entityType: z.string(),
  externalId: z.string(),
  op: z.string(),
  eventKey: z.string().min(1),
  eventTime: z.string(),
  fields: z.record(z.string(), z.unknown()).default({}),
  fieldTimes: z.record(z.string(), z.unknown()).default({}),
  providerVersion: z.string().nullish(),
  origin: z.record(z.string(), z.unknown()).nullish(),
});

/** A `push` letter's payload: the outbox rows of the refused write (bigint ids, as text or numbers). */
const failedWrite = z.object({
  outboxIds: z.array(z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()])).min(1),
});

const RETRY_SUFFIX = /#retry-(\d+)$/;
// Far more retries of one event than anyone makes; reaching it means the loop below is wrong.
const MAX_RETRY_KEYS = 100;

/**
 * `key#retry-n` for the nth retry of an event. The log drops a key it already holds, so a
 * retry needs a key of its own; the retry of a retried event counts on from its key.
 */
export function nextRetryKey(eventKey: string): string {
  const match = RETRY_SUFFIX.exec(eventKey);
  const base = match ? eventKey.slice(0, match.index) : eventKey;
  return `${base}#retry-${match ? Number(match[1]) + 1 : 1}`;
}

/**
 * Dead letters of the caller's workspace: read them, retry one (redo its work: append the
 * event to the log again, or put the refused writes back in the outbox), or discard it.
 * Both settle an open letter for good and leave an audit entry in the same transaction.
 */
@Injectable()
export class DeadLettersService {
  constructor(
    @Inject(DeadLettersRepository) private readonly deadLetters: DeadLettersRepository,
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @InjectPinoLogger(DeadLettersService.name) private readonly logger: PinoLogger,
  ) {}

  async list(principal: Principal, query: DeadLetterListQuery): Promise<DeadLetterPage> {
    const filter = { status: query.status, connectionId: query.connectionId };
    const [rows, total] = await Promise.all([
      this.deadLetters.list(principal.workspaceId, {
        ...filter,
        before: query.cursor,
        limit: query.limit + 1,
      }),
      this.deadLetters.count(principal.workspaceId, filter),
    ]);
    const page = toPage(rows, query.limit);
    return { data: page.rows.map(toView), nextCursor: page.nextCursor, total };
  }

  async get(principal: Principal, id: string): Promise<DeadLetterDetailView> {
    const letter = await this.deadLetters.find(principal.workspaceId, id);
    if (!letter) throw new NotFoundException(`no dead letter ${id}`);
    return toDetailView(letter);
  }

  async retry(principal: Principal, id: string): Promise<RetriedView> {
    const settled = await this.settleRetry(principal, id);
    if (!settled.ok) throw refusal(settled.error, id, 'retried');
    return settled.value;
  }

  async discard(principal: Principal, id: string): Promise<DeadLetterDetailView> {
    const settled = await this.settleDiscard(principal, id);
    if (!settled.ok) throw refusal(settled.error, id, 'discarded');
    return settled.value;
  }

  /**
   * Retries or discards each letter as the per-letter routes do, one transaction and one
   * audit entry per letter, in the order given; a letter that cannot be settled is reported
   * and the others go on. A letter of another workspace is `not_found` and left untouched.
   */
  async bulk(principal: Principal, body: BulkDeadLettersBody): Promise<BulkDeadLettersView> {
    const data: BulkDeadLettersView['data'] = [];
    for (const id of [...new Set(body.ids.map((one) => one.toLowerCase()))]) {
      const settled =
        body.action === 'retry'
          ? await this.settleRetry(principal, id)
          : await this.settleDiscard(principal, id);
      if (settled.ok) {
        data.push({
          id,
          ok: true,
          outcome: body.action === 'retry' ? 'retried' : 'discarded',
          message: null,
        });
      } else {
        const outcome: BulkOutcome = settled.error.code;
        const message = refusal(settled.error, id, body.action === 'retry' ? 'retried' : 'discarded').message;
        data.push({ id, ok: false, outcome, message });
      }
    }
    const settledCount = data.filter((one) => one.ok).length;
    this.logger.info(
      { action: body.action, settled: settledCount, failed: data.length - settledCount },
      'dead letters settled in bulk',
    );
    return { data, settled: settledCount, failed: data.length - settledCount };
  }

  private async settleRetry(
    principal: Principal,
    id: string,
  ): Promise<Result<RetriedView, SettleError | RetryRefusal>> {
    const settled = await this.deadLetters.settle(
      principal.workspaceId,
      id,
      'retried',
      async (letter, tx) => {
        const redone = await this.redo(letter, tx);
        if (redone.ok) await this.audit.record(principal, 'dead_letter.retried', id, redone.value, tx);
        return redone;
      },
    );
    if (!settled.ok) return settled;
    const { letter, outcome } = settled.value;
    this.logger.info(
      { deadLetterId: id, connectionId: letter.connectionId, ...outcome },
      'dead letter retried',
    );
    return ok({ deadLetter: toDetailView(letter), retry: outcome });
  }

  private async settleDiscard(
    principal: Principal,
    id: string,
  ): Promise<Result<DeadLetterDetailView, SettleError>> {
    const settled = await this.deadLetters.settle(
      principal.workspaceId,
      id,
      'discarded',
      async (letter, tx) => {
        await this.audit.record(principal, 'dead_letter.discarded', id, { source: letter.source }, tx);
        return ok(null);
      },
    );
    if (!settled.ok) return settled;
    this.logger.info(
      { deadLetterId: id, connectionId: settled.value.letter.connectionId },
      'dead letter discarded',
    );
    return ok(toDetailView(settled.value.letter));
  }

  private async redo(letter: DeadLetterWithPayload, tx: Db): Promise<Result<RetryOutcome, RetryRefusal>> {
    switch (letter.source) {
      case 'log':
        return this.appendAgain(letter, tx);
      case 'push': {
        const write = failedWrite.safeParse(letter.payload);
        if (!write.success) return err({ code: 'unreadable_payload', reason: 'no outboxIds in its payload' });
        const ids = write.data.outboxIds.map((outboxId) => BigInt(outboxId));
        const requeued = await this.deadLetters.requeueFailedWrites(tx, letter.workspaceId, ids);
        return ok({ source: 'push', outboxRowsRequeued: requeued });
      }
      default:
        return err({ code: 'not_retryable', source: letter.source });
    }
  }

  /**
   * Appends the event again under a retry key, in the settling transaction: the event is on
   * the log only if the letter is settled and audited. The workspace is the letter's, never
   * the payload's: the log then refuses a connection of another workspace.
   */
  private async appendAgain(
    letter: DeadLetterWithPayload,
    tx: Db,
  ): Promise<Result<RetryOutcome, RetryRefusal>> {
    const inTx = <T>(text: string, values: unknown[]): Promise<T[]> =>
      tx.$queryRawUnsafe<T[]>(text, ...values);
    const event = loggedEvent.safeParse(letter.payload);
    if (!event.success) return err({ code: 'unreadable_payload', reason: 'its payload is not a log event' });
    const { providerVersion, origin, ...change } = event.data;
    let eventKey = change.eventKey;
    for (let attempt = 0; attempt < MAX_RETRY_KEYS; attempt++) {
      eventKey = nextRetryKey(eventKey);
      const appended = await this.log.appendWithin(inTx, [
        {
          ...change,
          workspaceId: letter.workspaceId,
          eventKey,
          ...(providerVersion ? { providerVersion } : {}),
          ...(origin ? { origin } : {}),
        },
      ]);
      if (!appended.ok) {
        if (appended.error.code === 'Closed')
          throw new ServiceUnavailableException('shutting down; retry again');
        return err({ code: 'refused_by_log', reason: appended.error.message });
      }
      const [result] = appended.value;
      // A key already on the log: an earlier retry of this same event (reopened since) took it.
      if (result?.isNew && result.offset !== null)
        return ok({ source: 'log', eventKey, partition: result.partition, offset: result.offset });
    }
    throw new Error(`no free retry key for event ${change.eventKey} after ${MAX_RETRY_KEYS} tries`);
  }
}

function refusal(error: SettleError | RetryRefusal, id: string, settling: 'retried' | 'discarded'): Error {
  switch (error.code) {
    case 'not_found':
      return new NotFoundException(`no dead letter ${id}`);
    case 'not_open':
      return new ConflictException(
        `dead letter ${id} is already ${error.status}; only an open one can be ${settling}`,
      );
    case 'not_retryable':
      return new ConflictException(
        `dead letters from source '${error.source}' cannot be retried; discard it once its cause is fixed`,
      );
    case 'unreadable_payload':
      return new ConflictException(`dead letter ${id} cannot be retried: ${error.reason}`);
    case 'refused_by_log':
      return new ConflictException(`the change log refused the event again: ${error.reason}`);
  }
}

function toView(letter: DeadLetterRecord): DeadLetterView {
  return {
    id: letter.id,
    source: letter.source,
    groupName: letter.groupName,
    partition: letter.partition,
    offset: letter.offset === null ? null : Number(letter.offset),
    connectionId: letter.connectionId,
    eventKey: letter.eventKey,
    errorCode: letter.errorCode,
    errorMessage: letter.errorMessage,
    attempts: letter.attempts,
    status: letter.status,
    createdAt: letter.createdAt.toISOString(),
    resolvedAt: letter.resolvedAt?.toISOString() ?? null,
  };
}

function toDetailView(letter: DeadLetterWithPayload): DeadLetterDetailView {
  return { ...toView(letter), payload: letter.payload };
}
