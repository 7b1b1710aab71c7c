import { z } from 'zod';
import { nextCursorField, pageQuery } from './page-cursor';

export const DEAD_LETTER_STATUSES = ['open', 'retried', 'discarded'] as const;
export type DeadLetterStatus = (typeof DEAD_LETTER_STATUSES)[number];

/** The sources a retry knows how to redo; letters from any other source can only be discarded. */
export const RETRYABLE_SOURCES = ['log', 'push'] as const;

export const deadLetterListQuery = z.object({
  status: z.enum(DEAD_LETTER_STATUSES).optional(),
  connectionId: z.uuid().optional(),
  ...pageQuery,
});
export type DeadLetterListQuery = z.output<typeof deadLetterListQuery>;

export const deadLetterView = z.object({
  id: z.uuid(),
  source: z
    .string()
    .describe(
      '`log` (an event a consumer group gave up on), `push` (a write a provider refused), `queue` (a job), …',
    ),
  groupName: z.string().nullable().describe('The consumer group, for `log`.'),
  partition: z.number().int().nullable(),
  offset: z.number().int().nullable(),
  connectionId: z.uuid().nullable(),
  eventKey: z.string().nullable(),
  errorCode: z.string(),
  errorMessage: z.string(),
  attempts: z.number().int(),
  status: z.enum(DEAD_LETTER_STATUSES),
  createdAt: z.iso.datetime(),
  resolvedAt: z.iso.datetime().nullable(),
});
export type DeadLetterView = z.output<typeof deadLetterView>;

export const deadLetterDetailView = deadLetterView.extend({
  payload: z
    .unknown()
    .describe(
      'What failed: the log event for `log`, the outbox rows and write for `push`, the job for `queue`.',
    ),
});
export type DeadLetterDetailView = z.output<typeof deadLetterDetailView>;

export const deadLetterPage = z.object({
  data: z.array(deadLetterView),
  nextCursor: nextCursorField,
  total: z.number().int().describe('How many letters match the filters, on every page.'),
});
export type DeadLetterPage = z.output<typeof deadLetterPage>;

export const retryOutcome = z.discriminatedUnion('source', [
  z.object({
    source: z.literal('log'),
    eventKey: z.string().describe('The key the event was appended under again: `<event key>#retry-<n>`.'),
    offset: z.number().int().describe('Where it landed on the log.'),
    partition: z.number().int(),
  }),
  z.object({
    source: z.literal('push'),
    outboxRowsRequeued: z
      .number()
      .int()
      .describe('Failed outbox rows set back to pending; rows since sent or superseded are left alone.'),
  }),
]);
export type RetryOutcome = z.output<typeof retryOutcome>;

export const retriedView = z.object({ deadLetter: deadLetterDetailView, retry: retryOutcome });
export type RetriedView = z.output<typeof retriedView>;

/** The most letters one bulk request settles. */
export const MAX_BULK_LETTERS = 500;

export const bulkDeadLettersBody = z.strictObject({
  action: z.enum(['retry', 'discard']),
  ids: z
    .array(z.uuid())
    .min(1)
    .max(MAX_BULK_LETTERS)
    .describe(`Up to ${MAX_BULK_LETTERS} letters; a repeated id is settled once.`),
});
export type BulkDeadLettersBody = z.output<typeof bulkDeadLettersBody>;

export const BULK_OUTCOMES = [
  'retried',
  'discarded',
  'not_found',
  'not_open',
  'not_retryable',
  'unreadable_payload',
  'refused_by_log',
] as const;
export type BulkOutcome = (typeof BULK_OUTCOMES)[number];

export const bulkDeadLettersView = z.object({
  data: z.array(
    z.object({
      id: z.uuid(),
      ok: z.boolean().describe('Settled as asked.'),
      outcome: z
        .enum(BULK_OUTCOMES)
        .describe(
          '`retried` or `discarded`; else why this letter was left as it was: `not_found` (none in this workspace), ' +
            '`not_open` (settled already), `not_retryable` (its source cannot be retried: discard it), ' +
            '`unreadable_payload`, `refused_by_log`.',
        ),
      message: z.string().nullable().describe('What went wrong, for a letter left as it was.'),
    }),
  ),
  settled: z.number().int().describe('How many letters were settled as asked.'),
  failed: z.number().int().describe('How many were left as they were.'),
});
export type BulkDeadLettersView = z.output<typeof bulkDeadLettersView>;
