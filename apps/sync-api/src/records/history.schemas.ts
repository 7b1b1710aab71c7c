import { z } from 'zod';
import { ACTOR_KINDS } from '../auth/principal';
import { MAX_PAGE_SIZE, provenanceEntry } from './records.schemas';

const RECORD_TYPES = ['person', 'company', 'deal', 'meeting', 'email_activity', 'task'] as const;

/** Opaque to callers: base64url of the last change's hash (a record's changes never go away). */
export const encodeHistoryCursor = (hash: string): string => Buffer.from(hash, 'utf8').toString('base64url');

const historyCursor = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const hash = Buffer.from(value, 'base64url').toString('utf8');
    if (!/^[0-9a-f]{64}$/.test(hash)) {
      ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
      return z.NEVER;
    }
    return hash;
  })
  .describe('`nextCursor` of the previous page.');

export const historyQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: historyCursor.optional(),
});
export type HistoryQuery = z.output<typeof historyQuery>;

export const historyEntry = z.object({
  id: z.string().describe('The change (its hash in the record’s document).'),
  at: z.iso
    .datetime()
    .describe(
      'When the change was made at its source (its event time, to the second); `as-of` this time shows it.',
    ),
  source: z
    .object({
      kind: z.enum(['connection', 'user']),
      id: z
        .string()
        .describe(
          'The connection; for a person’s edit `member:<id>` or the API key’s id (as in `provenance`).',
        ),
      provider: z
        .string()
        .nullable()
        .describe('The connection’s provider; null for a person, or a connection since removed.'),
      name: z
        .string()
        .nullable()
        .describe('The connection’s display name, or the name of the API key; null when unknown or removed.'),
      label: z
        .string()
        .nullable()
        .describe(
          'As in `provenance`: the member’s name (else email), the key’s name, or the connection’s provider and account.',
        ),
      actorKind: z.enum(ACTOR_KINDS).nullable().describe('A member or an API key; null for a connection.'),
    })
    .describe('Where the change came from.'),
  fields: z
    .record(
      z.string(),
      z.object({
        value: z.unknown(),
        eventTime: z.iso
          .datetime()
          .describe('The time the value carries (the provider’s, where it has one per field).'),
      }),
    )
    .describe('The fields the change set, to which values (unified field names; null is a clear).'),
  conflictResolution: z
    .boolean()
    .describe('A person settled a conflict with this change (the conflicts inbox).'),
  conflictId: z.uuid().nullable().describe('The conflict it settled, if it was a resolution.'),
});
export type HistoryEntryView = z.output<typeof historyEntry>;

const reason = z
  .object({ rule: z.string(), evidence: z.array(z.string()), score: z.number() })
  .nullable()
  .describe('Why (see `linkedBecause` on the record); null for what was done before reasons were kept.');

export const identityEvent = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('linked').describe('A system’s record became part of this one.'),
    at: z.iso.datetime(),
    connectionId: z.uuid(),
    provider: z.string().nullable(),
    externalId: z.string(),
    because: reason,
  }),
  z.object({
    kind: z.enum(['merge', 'unmerge']).describe('Two records made one, or given back.'),
    at: z.iso.datetime(),
    operationId: z.uuid(),
    survivorId: z.uuid(),
    absorbedId: z.uuid(),
    because: reason,
    undone: z.boolean().describe('A merge since undone.'),
  }),
]);
export type IdentityEventView = z.output<typeof identityEvent>;

export const historyPage = z.object({
  recordId: z.uuid(),
  identity: z
    .array(identityEvent)
    .describe(
      'How the record came to be made of what it holds, newest first: each system record linked to it and why, each merge or unmerge of it and why.',
    ),
  data: z.array(historyEntry).describe('Newest first.'),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
});
export type HistoryPage = z.output<typeof historyPage>;

export const asOfQuery = z.object({
  at: z.iso
    .datetime({ offset: true })
    .describe('ISO 8601 time, e.g. `2026-11-20T10:00:00Z` (encode a `+` offset as `%2B`).'),
});
export type AsOfQuery = z.output<typeof asOfQuery>;

export const asOfView = z.object({
  id: z.uuid(),
  type: z.enum(RECORD_TYPES),
  at: z.iso.datetime().describe('The time asked for, in UTC.'),
  fields: z
    .record(z.string(), z.unknown())
    .describe('The merged values at that time, in unified field names.'),
  provenance: z
    .record(z.string(), provenanceEntry)
    .describe('Per field: where its value then came from. Field policies are applied as they are now.'),
});
export type AsOfView = z.output<typeof asOfView>;
