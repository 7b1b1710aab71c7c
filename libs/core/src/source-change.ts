import { z } from 'zod';

export const ENTITY_TYPES = ['person', 'company', 'deal', 'meeting', 'email_activity', 'task'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/**
 * `upsert`, `delete` and `merge` are what a source reports (a merge also carries identity
 * operations); `claim`, `receipt`, `existing` and `version` are the push stage's: a write of
 * ours on its way to a record, the provider's confirmation of it, a create it refused because
 * the record exists already, and the version a refusal named of a record the log reported
 * already (libs/sync-stage write-events.ts). `policy` is an admin's new set of field policies
 * for one entity type (libs/conflicts policy-event.ts), in force from its place on the log.
 * `watermark` is a pull's guarantee that its connection has delivered every activity of the
 * type named that happened before the event's time (libs/sync-stage insights/watermark-event.ts).
 * `time_zone` is an admin's new zone for the workspace's days (insights/time-zone-event.ts).
 */
export const CHANGE_OPS = [
  'upsert',
  'delete',
  'merge',
  'claim',
  'receipt',
  'existing',
  'version',
  'policy',
  'watermark',
  'time_zone',
] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

/** Largest serialised change the log accepts; larger payloads are a connector bug. */
export const MAX_CHANGE_BYTES = 256 * 1024;

const isoOrDate = z.union([z.date(), z.iso.datetime({ offset: true })]).transform((v) => new Date(v));
const isoDateTime = z.iso.datetime({ offset: true });

const isPlainRecord = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** A record whose names must not be empty: the issue for one that is, else undefined. */
const emptyName = (record: object) =>
  Object.hasOwn(record, '')
    ? { code: 'custom' as const, path: [''], message: 'a field name cannot be empty', input: record }
    : undefined;

/**
 * A change's fields: a plain object whose names are not empty, copied. Written out rather than
 * as `z.record`, which makes two parse results per field (a mail's eleven fields, 150,000 mails
 * in a backfill: most of the log's validation time was those and their garbage).
 */
const fieldsRecord = z
  .custom<Record<string, unknown>>(isPlainRecord, { message: 'expected an object' })
  .transform((fields, ctx) => {
    const issue = emptyName(fields);
    if (issue === undefined) return { ...fields };
    ctx.issues.push(issue);
    return z.NEVER;
  });

/** A Date or an ISO 8601 date-time with an offset, as a new Date; undefined for anything else. */
const instantOf = (value: unknown): Date | undefined => {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : new Date(value);
  return typeof value === 'string' && isoDateTime.safeParse(value).success ? new Date(value) : undefined;
};

/**
 * Per field, its time as a Date. Fields given the same value (a mapper's one Date for all of
 * a mail's fields) share one Date, read once.
 */
const fieldTimesRecord = z
  .custom<Record<string, Date | string>>(isPlainRecord, { message: 'expected an object' })
  .transform((times, ctx) => {
    const empty = emptyName(times);
    if (empty !== undefined) {
      ctx.issues.push(empty);
      return z.NEVER;
    }
    const out: Record<string, Date> = {};
    let last: { from: unknown; date: Date } | undefined;
    for (const name of Object.keys(times)) {
      const value = times[name];
      const date = last !== undefined && value === last.from ? last.date : instantOf(value);
      if (date === undefined) {
        ctx.issues.push({
          code: 'custom',
          path: [name],
          message: 'expected a Date or an ISO 8601 date-time with an offset',
          input: value,
        });
        return z.NEVER;
      }
      last = { from: value, date };
      out[name] = date;
    }
    return out;
  });

/**
 * One change to one source record, in unified field names, as a connector or a user edit
 * produces it. The event key is identical on every redelivery of the same change.
 */
export const sourceChangeSchema = z.strictObject({
  // Lower-cased so that ids compare equal to what PostgreSQL returns.
  workspaceId: z.uuid().transform((id) => id.toLowerCase()),
  connectionId: z.uuid().transform((id) => id.toLowerCase()),
  entityType: z.enum(ENTITY_TYPES),
  externalId: z.string().min(1).max(512),
  op: z.enum(CHANGE_OPS),
  eventKey: z.string().min(1).max(512),
  eventTime: isoOrDate,
  fields: fieldsRecord.default({}),
  /** Event time per field where the provider has one (HubSpot property timestamps). */
  fieldTimes: fieldTimesRecord.default({}),
  providerVersion: z.string().max(256).optional(),
  /** Origin markers (HubSpot changeSource/sourceId, Google extendedProperties.private). */
  origin: z.record(z.string(), z.unknown()).optional(),
});

export type SourceChangeInput = z.input<typeof sourceChangeSchema>;
export type SourceChange = z.output<typeof sourceChangeSchema>;

/** The entity types a CRM associates records of (HubSpot contacts, companies, deals). */
export const ASSOCIABLE_TYPES = ['person', 'company', 'deal'] as const satisfies readonly EntityType[];
export type AssociableType = (typeof ASSOCIABLE_TYPES)[number];

/**
 * A reserved key of an upsert's `fields`: the records of the same connection that the source
 * record is associated with, per entity type, as external ids. It travels on the log with the
 * record's fields (the log has no column of its own for it), and the sync stage takes it out
 * before identity and merge: it is never a field of the merged view. Each type given is the
 * complete set at that version (an empty list: none); a type left out, or no key at all (a
 * webhook's single property), says nothing, and what was known stays.
 */
export const ASSOCIATIONS_FIELD = 'associations';
export type RecordAssociations = Partial<Record<AssociableType, string[]>>;

/** The associations an event's fields carry, if any; malformed entries are ignored. */
export function associationsOf(fields: Readonly<Record<string, unknown>>): RecordAssociations | undefined {
  const raw = fields[ASSOCIATIONS_FIELD];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const out: RecordAssociations = {};
  for (const type of ASSOCIABLE_TYPES) {
    const ids = (raw as Record<string, unknown>)[type];
    if (!Array.isArray(ids)) continue;
    out[type] = [
      ...new Set(ids.filter((id): id is string => typeof id === 'string' && id.length > 0)),
    ].sort();
  }
  return out;
}

/** The fields without the reserved associations key (what identity and merge see). */
export function withoutAssociations<T extends Readonly<Record<string, unknown>>>(fields: T): T {
  if (!Object.hasOwn(fields, ASSOCIATIONS_FIELD)) return fields;
  const { [ASSOCIATIONS_FIELD]: _dropped, ...rest } = fields;
  return rest as T;
}
