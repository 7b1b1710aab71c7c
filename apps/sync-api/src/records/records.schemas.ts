import type { EntityType, FieldValueType } from '@syncline/core';
import { z } from 'zod';
import { ACTOR_KINDS } from '../auth/principal';

/** The unified record collections: URL segment → entity type. */
export const RECORD_RESOURCES = {
  people: 'person',
  companies: 'company',
  deals: 'deal',
  meetings: 'meeting',
  tasks: 'task',
  'email-activities': 'email_activity',
} as const satisfies Record<string, EntityType>;
export type RecordResource = keyof typeof RECORD_RESOURCES;

export const MAX_PAGE_SIZE = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Cursors are opaque to callers: the last id of the page, base64url-encoded. */
export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

const cursor = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const id = Buffer.from(value, 'base64url').toString('utf8');
    if (!UUID.test(id)) {
      ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
      return z.NEVER;
    }
    return id.toLowerCase();
  })
  .describe('`nextCursor` of the previous page.');

const page = {
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: cursor.optional(),
};

/** How a record list is ordered: by id (the default), by last change, or by name. */
const BASE_SORTS = ['id', 'updatedAt', '-updatedAt', 'name'] as const;
/** People, companies and deals may also be ordered by their activity insights. */
const INSIGHT_SORTS = [...BASE_SORTS, '-lastContacted'] as const;
export const LIST_SORTS = INSIGHT_SORTS;
export type ListSort = (typeof LIST_SORTS)[number];

/** The activity trends (entity_insight.trend); a record without insights is `cold`. */
export const TRENDS = ['warming', 'steady', 'cooling', 'cold'] as const;
export type Trend = (typeof TRENDS)[number];
export const CONTACT_VIAS = ['mail_in', 'mail_out', 'meeting'] as const;

/** Where a page of a record list ended: the sort it was read under, its sort value and id. */
export interface ListCursor {
  sort: ListSort;
  /**
   * The last record's sort value (ISO time or lower-cased name); absent for `id`. Null under
   * `-lastContacted` once the page reached the records never contacted.
   */
  value?: string | null;
  id: string;
}

/**
 * List cursors are opaque to callers. Under the default order a cursor is the last id; under
 * another it also carries the sort and the last sort value, so a page continues exactly where
 * the previous ended (keyset paging, no offsets) and a cursor of another order is refused.
 */
export const encodeListCursor = (cursor: ListCursor): string =>
  cursor.sort === 'id'
    ? encodeCursor(cursor.id)
    : Buffer.from(
        JSON.stringify([
          cursor.sort,
          cursor.sort === '-lastContacted' ? (cursor.value ?? null) : (cursor.value ?? ''),
          cursor.id,
        ]),
        'utf8',
      ).toString('base64url');

const isoTime = z.iso.datetime({ offset: true });

/** Whether a cursor's sort value is one its sort makes: a name, an ISO time, or (last contacted) null. */
const validSortValue = (sort: ListSort, value: unknown): value is string | null => {
  if (sort === 'name') return typeof value === 'string';
  if (sort === '-lastContacted' && value === null) return true;
  return typeof value === 'string' && isoTime.safeParse(value).success;
};

const listCursor = z
  .string()
  .max(1_000)
  .transform((value, ctx): ListCursor => {
    const text = Buffer.from(value, 'base64url').toString('utf8');
    if (UUID.test(text)) return { sort: 'id', id: text.toLowerCase() };
    try {
      const parsed: unknown = JSON.parse(text);
      if (
        Array.isArray(parsed) &&
        parsed.length === 3 &&
        (LIST_SORTS as readonly unknown[]).includes(parsed[0]) &&
        parsed[0] !== 'id' &&
        validSortValue(parsed[0] as ListSort, parsed[1]) &&
        typeof parsed[2] === 'string' &&
        UUID.test(parsed[2])
      )
        return {
          sort: parsed[0] as ListSort,
          value: parsed[1] as string | null,
          id: parsed[2].toLowerCase(),
        };
    } catch {
      // not JSON: refused below
    }
    ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
    return z.NEVER;
  })
  .describe('`nextCursor` of the previous page (read under the same `sort`).');

const listBase = {
  limit: page.limit,
  cursor: listCursor.optional(),
  q: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('Text in the name, email or domain, without regard to case (substring match).'),
  owner: z.string().trim().min(1).max(100).optional().describe('Only records whose `ownerId` is this.'),
  updatedSince: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Only records whose merged view changed at or after this time.'),
  sort: z
    .enum(BASE_SORTS)
    .default('id')
    .describe('`id` (default), `updatedAt` (oldest change first), `-updatedAt` (newest first) or `name`.'),
};

/** The list query of a collection with activity insights: their order and the trend filter too. */
const insightListBase = {
  ...listBase,
  sort: z
    .enum(INSIGHT_SORTS)
    .default('id')
    .describe(
      '`id` (default), `updatedAt` (oldest change first), `-updatedAt` (newest first), `name`, or ' +
        '`-lastContacted` (most recently contacted first, then the records never contacted, by id).',
    ),
  trend: z
    .enum(TRENDS)
    .optional()
    .describe('Only records of this activity trend; `cold` includes the records never contacted.'),
};

/** A cursor continues only the order it was made under. */
const sameSort = (query: { sort: ListSort; cursor?: ListCursor | undefined }, ctx: z.RefinementCtx) => {
  if (query.cursor !== undefined && query.cursor.sort !== query.sort)
    ctx.addIssue({
      code: 'custom',
      path: ['cursor'],
      message: `a cursor of sort=${query.cursor.sort}, not sort=${query.sort}`,
    });
};

const email = z
  .string()
  .trim()
  .min(1)
  .max(320)
  .optional()
  .describe('Matches `email` or any of `emails`, without regard to case.');
const stage = (field: string) =>
  z.string().trim().min(1).max(100).optional().describe(`Only records whose \`${field}\` is this.`);

/** The query each collection takes: paging, search, filters and order for all; a lookup key where the type has one. */
export const listQueries = {
  people: z.object({ ...insightListBase, email, stage: stage('lifecycleStage') }).superRefine(sameSort),
  companies: z
    .object({
      ...insightListBase,
      domain: z
        .string()
        .trim()
        .min(1)
        .max(255)
        .optional()
        .describe('Matches `domain`, without regard to case.'),
    })
    .superRefine(sameSort),
  deals: z.object({ ...insightListBase, stage: stage('stage') }).superRefine(sameSort),
  meetings: z.object(listBase).superRefine(sameSort),
  tasks: z.object(listBase).superRefine(sameSort),
  'email-activities': z.object(listBase).superRefine(sameSort),
} as const satisfies Record<RecordResource, z.ZodType>;

/** What every list query parses to. */
export interface ListQuery {
  limit: number;
  cursor?: ListCursor | undefined;
  q?: string | undefined;
  owner?: string | undefined;
  updatedSince?: string | undefined;
  sort: ListSort;
  email?: string | undefined;
  domain?: string | undefined;
  stage?: string | undefined;
  trend?: Trend | undefined;
}

/** The field `stage` filters on, per entity type. */
export const STAGE_FIELD: Partial<Record<EntityType, string>> = { person: 'lifecycleStage', deal: 'stage' };

export const provenanceEntry = z.object({
  source: z.object({
    kind: z.enum(['connection', 'user']),
    id: z
      .string()
      .describe("The connection; for a person's edit `member:<id>` (signed in) or the API key's id."),
    label: z
      .string()
      .nullable()
      .describe(
        'How it reads: a member’s name (else email), an API key’s name, a connection’s provider and account ("HubSpot 12345678", "Google ana@acme.com"); null when unknown.',
      ),
    actorKind: z
      .enum(ACTOR_KINDS)
      .nullable()
      .describe('For a person’s edit: a member or an API key; null for a connection.'),
  }),
  eventTime: z.iso.datetime().describe('When the winning value was set at its source.'),
  conflicted: z.boolean().describe('The value won a conflict (see openConflicts and the conflicts inbox).'),
});

const reasonFields = {
  rule: z
    .string()
    .describe(
      '`created`: no key matched, the record began this one; `shared-key`: a deterministic key (the same address, phone with the same name, domain, iCalUID, Message-ID); for a merge also `person-merge` (asked in the API) or `provider-merge` (made in the CRM).',
    ),
  evidence: z
    .array(z.string())
    .describe('The keys that agreed (`email:ana@acme.com`), or who merged (`by:<key id>`).'),
  score: z.number().describe('1 for a key or a person’s decision.'),
};

/** Why a record is linked to this one: shown so an admin can see why two records are one. */
export const linkedBecause = z
  .object({
    ...reasonFields,
    joinedBy: z
      .array(z.object({ operationId: z.uuid(), ...reasonFields }))
      .optional()
      .describe(
        'The merges that brought the record here from the entity it was first linked to, oldest first.',
      ),
  })
  .nullable()
  .describe('Why the record is linked here; null for links made before reasons were kept.');
export type LinkedBecause = z.infer<typeof linkedBecause>;

export const recordView = z.object({
  id: z.uuid(),
  type: z.enum(['person', 'company', 'deal', 'meeting', 'email_activity', 'task']),
  displayName: z.string().nullable(),
  fields: z.record(z.string(), z.unknown()).describe('The merged values, in unified field names.'),
  provenance: z.record(z.string(), provenanceEntry).describe('Per field: where its value came from.'),
  version: z.number().int().describe('Rises with every change of the merged view.'),
  sourceLinks: z.array(
    z.object({
      connectionId: z.uuid(),
      provider: z.string().nullable().describe('Null when the connection has since been removed.'),
      externalId: z.string(),
      url: z
        .string()
        .nullable()
        .describe(
          'The page that shows the record in its own system (its HubSpot record page), or null when there is none.',
        ),
      linkedBecause: linkedBecause,
    }),
  ),
  associations: z
    .array(
      z.object({
        id: z.uuid().describe('The associated record (in `people`, `companies` or `deals`).'),
        type: z.enum(['person', 'company', 'deal']),
        displayName: z.string().nullable(),
        sources: z
          .array(
            z.object({
              kind: z
                .enum(['connection', 'derived'])
                .describe(
                  '`connection`: a CRM associates the two records; `derived`: a person’s email domain is the company’s, and no CRM gives the person a company.',
                ),
              connectionId: z.uuid().nullable().describe('The CRM connection (null when derived).'),
              provider: z
                .string()
                .nullable()
                .describe('Null when derived, or when the connection was removed.'),
              evidence: z
                .object({ domain: z.string(), email: z.string() })
                .nullable()
                .describe('Derived: the domain and the address it was taken from.'),
            }),
          )
          .describe('Everything that says it: one entry per CRM connection, or one derived.'),
      }),
    )
    .describe(
      "A person's company (and deals), a company's people and deals, a deal's people and company: as the CRMs associate them, one entry per record with every source.",
    ),
  openConflicts: z.array(
    z.object({
      id: z.uuid(),
      field: z.string(),
      kind: z.string().describe('concurrent | late'),
      policy: z.string(),
      candidates: z.unknown().describe('The competing values with their sources and times.'),
      createdAt: z.iso.datetime(),
    }),
  ),
  mergedInto: z
    .uuid()
    .nullable()
    .describe(
      'Set when this record was merged into another: read that one instead. Merged records are not listed.',
    ),
  deletedIn: z
    .array(
      z.object({
        connectionId: z.uuid(),
        name: z
          .string()
          .nullable()
          .describe(
            "The connection's display name (its account id when it has none); null when it was removed.",
          ),
        provider: z.string().nullable().describe('Null when the connection has since been removed.'),
        at: z.iso
          .datetime()
          .describe(
            "When its record was deleted there (the deletion's time at the source; Gmail: when seen).",
          ),
      }),
    )
    .describe(
      'The systems that deleted their record of this one, oldest first. Each was unlinked (it is no longer ' +
        'in `sourceLinks`) and is not given the record again; under the default delete policy (`unlink`) the ' +
        "other systems' copies and this record are kept, nothing is deleted elsewhere.",
    ),
  flags: z.record(z.string(), z.unknown()).describe('Markers such as `deletedIn` (raw; see `deletedIn`).'),
  updatedAt: z.iso.datetime(),
  insights: z
    .object({
      lastContactedAt: z.iso.datetime().nullable().describe('The latest mail in or out or meeting held.'),
      lastContactedVia: z.enum(CONTACT_VIAS).nullable(),
      nextMeetingAt: z.iso
        .datetime()
        .nullable()
        .describe('The earliest meeting ahead as of the last activity change; null once it has started.'),
      trend: z.enum(TRENDS).describe('`cold` for a record never contacted (see `/insights`).'),
    })
    .nullable()
    .describe(
      'Activity insights at a glance, as lists sort and filter by them (the full figures are at ' +
        '`/{id}/insights`); null for meetings, tasks and email activities.',
    ),
});
export type RecordView = z.output<typeof recordView>;

export const recordPage = z.object({
  data: z.array(recordView),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
});
export type RecordPage = z.output<typeof recordPage>;

/** A meeting's participant, as the unified `attendees` field holds them. */
const attendee = z.strictObject({
  email: z.string().max(320),
  name: z.string().max(200).optional(),
  responseStatus: z.enum(['needsAction', 'declined', 'tentative', 'accepted']),
  organizer: z.literal(true).optional(),
});

/** What a person may write to a field of each value type (an edit, a conflict's resolution); null clears any. */
export const FIELD_VALUE_SCHEMAS = {
  text: z.string().max(10_000),
  number: z.number().finite(),
  boolean: z.boolean(),
  'text list': z.array(z.string().max(1_000)).max(100),
  'attendee list': z.array(attendee).max(1_000),
} as const satisfies Record<FieldValueType, z.ZodType>;

/** A field value an edit may set: text, a number, a flag, a list of texts, or null to clear (each field checks its own). */
const fieldValue = z.union([
  FIELD_VALUE_SCHEMAS.text,
  FIELD_VALUE_SCHEMAS.number,
  FIELD_VALUE_SCHEMAS.boolean,
  z.null(),
  FIELD_VALUE_SCHEMAS['text list'],
]);

export const editBody = z.strictObject({
  fields: z
    .record(z.string().min(1).max(100), fieldValue)
    .refine((fields) => Object.keys(fields).length > 0, 'at least one field')
    .refine((fields) => Object.keys(fields).length <= 50, 'at most 50 fields')
    .describe(
      'Unified field names (see the record type), or custom fields the record already carries; null clears.',
    ),
});
export type EditBody = z.output<typeof editBody>;

/** `If-Match`: the record version as returned in `version` / `ETag` (`"12"`, `12` or `W/"12"`). */
export const ifMatchHeader = z
  .string()
  .regex(/^(W\/)?"?\d{1,18}"?$/, 'a record version, as in the ETag')
  .transform((value) => BigInt(value.replace(/^W\//, '').replaceAll('"', '')))
  .optional();

/** `Idempotency-Key`: a retried request with the same key is one edit. */
export const idempotencyKeyHeader = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,120}$/, '1–120 letters, digits, . _ : -')
  .optional();

export const acceptedEdit = z.object({
  accepted: z.literal(true),
  changeKey: z.string().describe('The edit on the change log; read the record again to see it merged.'),
});
export type AcceptedEditView = z.output<typeof acceptedEdit>;

export const conflictView = z.object({
  id: z.uuid(),
  recordId: z.uuid(),
  recordType: z.enum(['person', 'company', 'deal', 'meeting', 'email_activity', 'task']),
  field: z.string(),
  kind: z.string().describe('concurrent (edited in two places without seeing each other) | late'),
  policy: z.string().describe('The field policy that applied: lww | priority | manual | union.'),
  status: z.enum(['open', 'resolved']),
  candidates: z
    .array(
      z.object({
        value: z.unknown(),
        source: z.object({ kind: z.enum(['connection', 'user']), id: z.string() }),
        eventTime: z.iso.datetime(),
      }),
    )
    .describe('Every competing value, with its source and event time.'),
  winner: z
    .unknown()
    .nullable()
    .describe('The value the policy chose; null while a manual conflict is open.'),
  resolution: z.unknown().nullable().describe('How a person settled it: the value, who and when.'),
  createdAt: z.iso.datetime(),
  resolvedAt: z.iso.datetime().nullable(),
});
export type ConflictView = z.output<typeof conflictView>;

export const conflictPage = z.object({
  data: z.array(conflictView),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
});
export type ConflictPage = z.output<typeof conflictPage>;

export const conflictQuery = z.object({
  ...page,
  status: z.enum(['open', 'resolved']).default('open'),
  recordId: z.uuid().optional().describe("Only this record's conflicts."),
});
export type ConflictQuery = z.output<typeof conflictQuery>;

export const resolveBody = z.strictObject({
  // Any JSON here: the conflict's field decides what its value may be, and names itself when refused.
  value: z
    .unknown()
    .refine((value) => value !== undefined, 'required')
    .describe(
      "The value to keep: one of the candidates, or a new one, of the field's type (text, a number, " +
        'true or false, a list of texts or of attendees), or null.',
    ),
});
export type ResolveBody = z.output<typeof resolveBody>;
