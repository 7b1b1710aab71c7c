import { ENTITY_TYPES } from '@syncline/core';
import { z } from 'zod';
import { decodePageCursor, nextCursorField, type PageCursor, pageQuery } from '../admin/page-cursor';
import { type RecordResource, recordView } from '../records/records.schemas';
import type { PriorityCursor } from './identity-review.repository';

/** The collections whose records a salesperson may merge: the types identity suggests duplicates of. */
export const MERGE_RESOURCES = ['people', 'companies', 'deals'] as const satisfies readonly RecordResource[];
export type MergeResource = (typeof MERGE_RESOURCES)[number];

export const POSSIBLE_DUPLICATE_STATUSES = ['open', 'merged', 'dismissed'] as const;

const entityType = z.enum(ENTITY_TYPES);

/** The queue in priority order continues from (priority, created_at, id): base64url JSON of the three. */
export const encodePriorityCursor = (row: { priority: string; createdAt: Date; id: string }): string =>
  Buffer.from(JSON.stringify(['p', row.priority, row.createdAt.toISOString(), row.id]), 'utf8').toString(
    'base64url',
  );

const priorityTuple = z.tuple([
  z.literal('p'),
  z.string().regex(/^-?\d+(\.\d+)?$/),
  z.iso.datetime(),
  z.uuid(),
]);

const duplicateCursor = z
  .string()
  .max(300)
  .transform((value, ctx): PageCursor | PriorityCursor => {
    const newest = decodePageCursor(value);
    if (newest !== undefined) return newest;
    try {
      const parsed = priorityTuple.safeParse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
      if (parsed.success) {
        const [, priority, createdAt, id] = parsed.data;
        return { priority, createdAt: new Date(createdAt), id: id.toLowerCase() };
      }
    } catch {
      // not JSON: refused below
    }
    ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
    return z.NEVER;
  })
  .describe('`nextCursor` of the previous page (read under the same `sort`).');

export const possibleDuplicateQuery = z.object({
  entityType: entityType.optional().describe('Only pairs of this type (`person`, `company`, `deal`).'),
  status: z.enum(POSSIBLE_DUPLICATE_STATUSES).default('open'),
  sort: z
    .enum(['priority', 'newest'])
    .default('priority')
    .describe(
      '`priority` (default): what most deserves a person’s time first, the score with its evidence weighed (see `priority`); `newest`: newest first.',
    ),
  limit: pageQuery.limit,
  cursor: duplicateCursor.optional(),
});
export type PossibleDuplicateQuery = z.output<typeof possibleDuplicateQuery>;

const reviewedRecord = z.object({
  id: z.uuid(),
  displayName: z.string().nullable(),
  fields: z.record(z.string(), z.unknown()).describe('The merged values, in unified field names.'),
  sourceLinks: z
    .array(
      z.object({
        connectionId: z.uuid(),
        provider: z.string().nullable(),
        externalId: z.string(),
      }),
    )
    .describe('The records it is made of, system by system.'),
  mergedInto: z.uuid().nullable().describe('Set when it has been merged into another record since.'),
});

export const possibleDuplicateView = z.object({
  id: z.uuid(),
  entityType,
  status: z
    .enum(POSSIBLE_DUPLICATE_STATUSES)
    .describe('open: waiting for a person; merged; dismissed: not the same, never suggested again.'),
  score: z.number().describe('How alike the two are, 0 to 1 (grey zone: alike, not sure enough to merge).'),
  evidence: z.array(z.unknown()).describe('What matched, as the identity stage recorded it.'),
  priority: z
    .number()
    .describe(
      'The queue’s order: the score, +0.5 when a key says the two are one, +0.05 for each of a shared phone, address local part, organisation domain or company name, −0.3 when one connection keeps the two apart (usually two people).',
    ),
  a: reviewedRecord,
  b: reviewedRecord,
  createdAt: z.iso.datetime(),
  reviewedBy: z.string().nullable().describe("Who dismissed the pair: an API key's id, or `member:<id>`."),
  reviewedAt: z.iso.datetime().nullable(),
});
export type PossibleDuplicateView = z.output<typeof possibleDuplicateView>;

export const possibleDuplicatePage = z.object({
  data: z.array(possibleDuplicateView),
  nextCursor: nextCursorField,
});
export type PossibleDuplicatePage = z.output<typeof possibleDuplicatePage>;

export const mergeBody = z.strictObject({
  absorbedId: z
    .uuid()
    .describe(
      'The record to merge into this one (of the same type). Its systems are linked to this record and its id ' +
        'reads as this record from then on.',
    ),
});
export type MergeBody = z.output<typeof mergeBody>;

export const acceptedOperation = z.object({
  accepted: z.literal(true),
  operationId: z
    .uuid()
    .describe('The operation on the change log: GET /api/v1/identity-operations/{operationId} follows it.'),
});
export type AcceptedOperationView = z.output<typeof acceptedOperation>;

const recordSummary = z.object({ id: z.uuid(), displayName: z.string().nullable() }).nullable();

export const identityOperationView = z.object({
  id: z.uuid(),
  kind: z.enum(['merge', 'unmerge']),
  status: z
    .enum(['pending', 'applied', 'undone'])
    .describe(
      'pending: on the change log, not applied (the sync stage is behind, or refused it because the records ' +
        'changed meanwhile); applied; undone: a merge an unmerge has undone.',
    ),
  entityType: entityType.nullable(),
  survivor: recordSummary.describe('The record the other was merged into.'),
  absorbed: recordSummary.describe('The record merged into the survivor (split off again by an unmerge).'),
  undoes: z.uuid().nullable().describe('For an unmerge: the merge it undoes.'),
  requestedBy: z.string().nullable().describe("Who asked for it: an API key's id, or `member:<id>`."),
  appliedAt: z.iso.datetime().nullable(),
  undoneAt: z.iso.datetime().nullable(),
});
export type IdentityOperationView = z.output<typeof identityOperationView>;

export const identityOperationQuery = z.object({
  recordId: z.uuid().optional().describe('Only operations of this record (as survivor or absorbed).'),
  ...pageQuery,
});
export type IdentityOperationQuery = z.output<typeof identityOperationQuery>;

export const identityOperationPage = z.object({
  data: z.array(identityOperationView),
  nextCursor: nextCursorField,
});
export type IdentityOperationPage = z.output<typeof identityOperationPage>;

export const unmergedView = z.object({
  operationId: z.uuid().describe('The unmerge operation.'),
  survivor: recordView.describe('The record the merge went into, without what it took in.'),
  restored: recordView.describe('The record split off again, with its systems back.'),
});
export type UnmergedView = z.output<typeof unmergedView>;

/** `Idempotency-Key`: a retried merge or unmerge with the same key is one operation. */
export const operationKeyHeader = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,120}$/, '1–120 letters, digits, . _ : -')
  .optional();
