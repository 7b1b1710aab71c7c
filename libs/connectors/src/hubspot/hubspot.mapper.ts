import type { AssociableType, EntityType, RecordAssociations } from '@syncline/core';

/** A CRM v3 record as the SDK returns it (dates parsed) or as recorded JSON (ISO strings). */
export interface HubspotRecord {
  id: string;
  properties: Record<string, string | null | undefined>;
  createdAt: Date | string;
  updatedAt: Date | string;
  archived?: boolean;
  archivedAt?: Date | string;
  propertiesWithHistory?: Record<string, readonly HubspotHistoryItem[]>;
  /** v3 associations, as a read with `associations=companies,…` returns them (keyed by object type). */
  associations?: Record<string, { results: readonly { id: string; type?: string }[] }>;
}

export interface HubspotHistoryItem {
  value: string;
  timestamp: Date | string;
  sourceType: string;
  sourceId?: string;
}

export type HubspotObjectType = 'contacts' | 'companies' | 'deals' | 'meetings' | 'tasks' | 'emails';

/**
 * How a property's value converts to its unified format (see UNIFIED_FIELDS in @syncline/core).
 * The enumeration kinds translate HubSpot's values to the unified lower-case ones and back; a
 * value without a translation passes through unchanged both ways, so it still round-trips.
 * `taskStatus` and `taskProgress` read the same property (hs_task_status) into two fields and
 * are combined again on write (see taskStatusValue).
 */
type Kind =
  | 'string'
  | 'number'
  | 'datetime'
  | 'taskStatus'
  | 'taskProgress'
  | 'taskPriority'
  | 'emailDirection'
  | 'emailStatus'
  | 'meetingOutcome';

type EnumKind = 'taskPriority' | 'emailDirection' | 'emailStatus' | 'meetingOutcome';

/** [HubSpot value, unified value] per enumeration kind. */
const ENUMS: Readonly<Record<EnumKind, readonly (readonly [string, string])[]>> = {
  taskPriority: [
    ['NONE', 'none'],
    ['LOW', 'low'],
    ['MEDIUM', 'medium'],
    ['HIGH', 'high'],
  ],
  emailDirection: [
    ['EMAIL', 'outbound'],
    ['INCOMING_EMAIL', 'inbound'],
    ['FORWARDED_EMAIL', 'forwarded'],
  ],
  emailStatus: [
    ['SENT', 'sent'],
    ['SENDING', 'sending'],
    ['SCHEDULED', 'scheduled'],
    ['BOUNCED', 'bounced'],
    ['FAILED', 'failed'],
  ],
  meetingOutcome: [
    ['SCHEDULED', 'scheduled'],
    ['COMPLETED', 'completed'],
    ['RESCHEDULED', 'rescheduled'],
    ['NO_SHOW', 'no_show'],
    ['CANCELED', 'canceled'],
  ],
};

const isEnumKind = (kind: Kind): kind is EnumKind => Object.hasOwn(ENUMS, kind);

interface ObjectSpec {
  objectType: HubspotObjectType;
  entityType: EntityType;
  /** Contacts: lastmodifieddate; everything else: hs_lastmodifieddate (!). */
  modifiedProperty: string;
  /** Unified field → [HubSpot property, value kind]. */
  fields: Readonly<Record<string, readonly [string, Kind]>>;
  /**
   * The associations this object carries to the log (one direction of each pair only: a
   * contact its companies, a deal its contacts and companies; the inverses say the same).
   */
  associations?: readonly { objectType: HubspotObjectType; entityType: AssociableType }[];
}

const owner = { ownerId: ['hubspot_owner_id', 'string'] } as const;

export const OBJECT_SPECS: readonly ObjectSpec[] = [
  {
    objectType: 'contacts',
    entityType: 'person',
    modifiedProperty: 'lastmodifieddate',
    fields: {
      email: ['email', 'string'],
      firstName: ['firstname', 'string'],
      lastName: ['lastname', 'string'],
      phone: ['phone', 'string'],
      company: ['company', 'string'],
      jobTitle: ['jobtitle', 'string'],
      lifecycleStage: ['lifecyclestage', 'string'],
      ...owner,
    },
    associations: [{ objectType: 'companies', entityType: 'company' }],
  },
  {
    objectType: 'companies',
    entityType: 'company',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      name: ['name', 'string'],
      domain: ['domain', 'string'],
      phone: ['phone', 'string'],
      industry: ['industry', 'string'],
      city: ['city', 'string'],
      country: ['country', 'string'],
      ...owner,
    },
  },
  {
    objectType: 'deals',
    entityType: 'deal',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      name: ['dealname', 'string'],
      amount: ['amount', 'number'],
      stage: ['dealstage', 'string'],
      pipeline: ['pipeline', 'string'],
      closeDate: ['closedate', 'datetime'],
      ...owner,
    },
    associations: [
      { objectType: 'contacts', entityType: 'person' },
      { objectType: 'companies', entityType: 'company' },
    ],
  },
  {
    objectType: 'meetings',
    entityType: 'meeting',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      title: ['hs_meeting_title', 'string'],
      description: ['hs_meeting_body', 'string'],
      startAt: ['hs_meeting_start_time', 'datetime'],
      endAt: ['hs_meeting_end_time', 'datetime'],
      location: ['hs_meeting_location', 'string'],
      outcome: ['hs_meeting_outcome', 'meetingOutcome'],
      ...owner,
    },
  },
  {
    objectType: 'tasks',
    entityType: 'task',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      title: ['hs_task_subject', 'string'],
      notes: ['hs_task_body', 'string'],
      status: ['hs_task_status', 'taskStatus'],
      progress: ['hs_task_status', 'taskProgress'],
      priority: ['hs_task_priority', 'taskPriority'],
      dueAt: ['hs_timestamp', 'datetime'],
      ...owner,
    },
  },
  {
    objectType: 'emails',
    entityType: 'email_activity',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      subject: ['hs_email_subject', 'string'],
      text: ['hs_email_text', 'string'],
      direction: ['hs_email_direction', 'emailDirection'],
      status: ['hs_email_status', 'emailStatus'],
      sentAt: ['hs_timestamp', 'datetime'],
      ...owner,
    },
  },
];

/** Our unique property on every object type: the canonical entity id (upsert key, origin tag). */
export const SYNCLINE_ID_PROPERTY = 'syncline_id';

/**
 * What every property Syncline owns in a portal is named with (our id, the activity insights):
 * Syncline writes them and never reads them as fields, so no field mapping may name one.
 */
export const SYNCLINE_PROPERTY_PREFIX = 'syncline_';
export const isSynclineProperty = (property: string): boolean =>
  property.startsWith(SYNCLINE_PROPERTY_PREFIX);

export const specOfObject = (
  objectType: string,
  specs: readonly ObjectSpec[] = OBJECT_SPECS,
): ObjectSpec | undefined => specs.find((s) => s.objectType === objectType);
export const specOfEntity = (
  entityType: EntityType,
  specs: readonly ObjectSpec[] = OBJECT_SPECS,
): ObjectSpec | undefined => specs.find((s) => s.entityType === entityType);

const mappedSpecs = new WeakMap<Readonly<Record<string, string>>, readonly ObjectSpec[]>();

/**
 * The object specs of one connection: the defaults with its field mappings applied
 * (`<entity type>.<field>` → HubSpot property). A mapping moves a default field to another
 * property, keeping its kind, or adds a field (a custom property) as text. A mapped property
 * serves one field only: every default field whose property a mapping takes is dropped.
 * (By default only task status and progress share a property, hs_task_status.)
 */
export function specsFor(mappings: Readonly<Record<string, string>> | undefined): readonly ObjectSpec[] {
  if (!mappings || Object.keys(mappings).length === 0) return OBJECT_SPECS;
  const cached = mappedSpecs.get(mappings);
  if (cached) return cached;
  const specs = OBJECT_SPECS.map((spec) => {
    const prefix = `${spec.entityType}.`;
    // A mapping onto one of our own properties is refused where mappings are checked; one that
    // got stored all the same is ignored, so neither pull nor webhook ever reads such a property.
    const overrides = Object.entries(mappings).filter(
      ([key, property]) => key.startsWith(prefix) && !isSynclineProperty(property),
    );
    if (overrides.length === 0) return spec;
    const taken = new Set(overrides.map(([, property]) => property));
    const fields: Record<string, readonly [string, Kind]> = {};
    for (const [field, mapping] of Object.entries(spec.fields))
      if (!taken.has(mapping[0])) fields[field] = mapping;
    for (const [key, property] of overrides) {
      const field = key.slice(prefix.length);
      fields[field] = [property, spec.fields[field]?.[1] ?? 'string'];
    }
    return { ...spec, fields };
  });
  mappedSpecs.set(mappings, specs);
  return specs;
}

/** Properties to request for an object type: every mapped one, the modified date, our id. */
export function requestedProperties(spec: ObjectSpec): string[] {
  return [
    ...new Set([...Object.values(spec.fields).map(([p]) => p), spec.modifiedProperty, SYNCLINE_ID_PROPERTY]),
  ];
}

export interface UnifiedView {
  fields: Record<string, unknown>;
  /** Per-field event times, where the record carries property history. */
  fieldTimes: Record<string, Date>;
  /** The last writer, where history says (`changeSource`/`sourceId` in webhook terms). */
  origin?: { changeSource: string; sourceId?: string };
  /** Our canonical entity id, when Syncline created or tagged the record. */
  synclineId?: string;
}

export const toMillis = (d: Date | string): number => (d instanceof Date ? d.getTime() : Date.parse(d));

/**
 * A record's version as the connector reports it everywhere: `SourceChange.providerVersion`
 * (backfill, pull), `WriteReceipt.providerVersion`, and the current version a conditional
 * write's `expectedVersion` is compared with: the record's `updatedAt` (its
 * hs_lastmodifieddate / lastmodifieddate) as an ISO-8601 string in milliseconds.
 */
export const versionOf = (record: Pick<HubspotRecord, 'updatedAt'>): string =>
  new Date(toMillis(record.updatedAt)).toISOString();

/** A HubSpot property value in unified form; empty means no value. */
export function fromHubspotValue(value: string | null | undefined, kind: Kind): unknown {
  if (value === null || value === undefined || value === '') return null;
  if (kind === 'number') {
    const n = Number(value);
    return Number.isFinite(n) ? n : value;
  }
  if (kind === 'datetime') {
    const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
    return Number.isFinite(ms) ? new Date(ms).toISOString() : value;
  }
  // COMPLETED is completed; every other status (NOT_STARTED, IN_PROGRESS, WAITING, DEFERRED) open.
  if (kind === 'taskStatus') return value === 'COMPLETED' ? 'completed' : 'open';
  // Where an open task stands, lower-cased; none when not started or completed.
  if (kind === 'taskProgress')
    return value === 'COMPLETED' || value === 'NOT_STARTED' ? null : value.toLowerCase();
  if (isEnumKind(kind)) return ENUMS[kind].find(([h]) => h === value)?.[1] ?? value;
  return value;
}

/** A unified value as a HubSpot property value; null clears (HubSpot takes ""). */
export function toHubspotValue(value: unknown, kind: Kind): string {
  if (value === null || value === undefined) return '';
  if (kind === 'datetime') {
    const ms = value instanceof Date ? value.getTime() : Date.parse(String(value));
    return Number.isFinite(ms) ? new Date(ms).toISOString() : String(value);
  }
  if (kind === 'taskStatus' || kind === 'taskProgress') return taskStatusValue({ [kind]: value }) ?? '';
  if (isEnumKind(kind)) {
    const s = String(value);
    return ENUMS[kind].find(([, u]) => u === s)?.[0] ?? s;
  }
  return String(value);
}

/**
 * hs_task_status from the unified task status and progress (either may be absent), so that
 * what was read writes back unchanged: completed → COMPLETED; open with a progress → the
 * progress upper-cased (IN_PROGRESS, WAITING, DEFERRED); open without one → NOT_STARTED;
 * status null → cleared. `undefined` when there is nothing to write (progress alone, null).
 */
export function taskStatusValue(given: { taskStatus?: unknown; taskProgress?: unknown }): string | undefined {
  const { taskStatus: status, taskProgress: progress } = given;
  if (status === 'completed') return 'COMPLETED';
  if (typeof progress === 'string' && progress !== '') return progress.toUpperCase();
  if (status === null) return '';
  if (status !== undefined) return 'NOT_STARTED';
  return undefined;
}

/** Pure: a HubSpot record of one object type → unified fields (every mapped field, null when empty). */
export function toUnified(spec: ObjectSpec, raw: HubspotRecord): UnifiedView {
  const fields: Record<string, unknown> = {};
  const fieldTimes: Record<string, Date> = {};
  let latest: HubspotHistoryItem | undefined;
  for (const [field, [property, kind]] of Object.entries(spec.fields)) {
    fields[field] = fromHubspotValue(raw.properties[property], kind);
    const last = raw.propertiesWithHistory?.[property]?.[0]; // newest first
    if (last) {
      fieldTimes[field] = new Date(toMillis(last.timestamp));
      if (!latest || toMillis(last.timestamp) > toMillis(latest.timestamp)) latest = last;
    }
  }
  const synclineId = raw.properties[SYNCLINE_ID_PROPERTY];
  return {
    fields,
    fieldTimes,
    ...(latest
      ? {
          origin: {
            changeSource: latest.sourceType,
            ...(latest.sourceId ? { sourceId: latest.sourceId } : {}),
          },
        }
      : {}),
    ...(synclineId ? { synclineId } : {}),
  };
}

/** The object types to ask a v3 read's `associations` for; undefined when the object carries none. */
export function associationTypesOf(spec: ObjectSpec): string[] | undefined {
  return spec.associations && spec.associations.length > 0
    ? spec.associations.map((a) => a.objectType)
    : undefined;
}

/**
 * Pure: the associations of a record read with `associations=` (associationTypesOf), as unified
 * entity types → external ids, sorted. A type with none is an empty list: it was asked for.
 */
export function associationsOfRecord(spec: ObjectSpec, raw: HubspotRecord): RecordAssociations | undefined {
  if (!spec.associations || spec.associations.length === 0) return undefined;
  const out: RecordAssociations = {};
  for (const { objectType, entityType } of spec.associations) {
    const ids = (raw.associations?.[objectType]?.results ?? []).map((r) => String(r.id));
    out[entityType] = sortIds(ids);
  }
  return out;
}

/** Distinct ids in numeric order (HubSpot ids are numbers as strings), so equal sets read alike. */
export const sortIds = (ids: readonly string[]): string[] =>
  [...new Set(ids)].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));

/** Pure: unified fields → HubSpot properties. Only the fields given are written; null clears. */
export function toHubspot(
  spec: ObjectSpec,
  fields: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const properties: Record<string, string> = {};
  const taskStatuses: Record<string, { taskStatus?: unknown; taskProgress?: unknown }> = {};
  for (const [field, value] of Object.entries(fields)) {
    const mapping = spec.fields[field];
    if (!mapping || value === undefined) continue;
    const [property, kind] = mapping;
    if (kind === 'taskStatus' || kind === 'taskProgress') {
      // Status and progress share hs_task_status: combined once both are seen.
      taskStatuses[property] = { ...taskStatuses[property], [kind]: value };
      continue;
    }
    properties[property] = toHubspotValue(value, kind);
  }
  for (const [property, given] of Object.entries(taskStatuses)) {
    const value = taskStatusValue(given);
    if (value !== undefined) properties[property] = value;
  }
  return properties;
}

/** The unified fields a HubSpot property maps to (webhook property changes); usually one. */
export function fieldsOfProperty(spec: ObjectSpec, property: string): [string, Kind][] {
  return Object.entries(spec.fields)
    .filter(([, [p]]) => p === property)
    .map(([field, [, kind]]) => [field, kind]);
}

const spec = (t: HubspotObjectType) => specOfObject(t)!;
export const toUnifiedPerson = (raw: HubspotRecord) => toUnified(spec('contacts'), raw);
export const toHubspotContact = (fields: Readonly<Record<string, unknown>>) =>
  toHubspot(spec('contacts'), fields);
export const toUnifiedCompany = (raw: HubspotRecord) => toUnified(spec('companies'), raw);
export const toHubspotCompany = (fields: Readonly<Record<string, unknown>>) =>
  toHubspot(spec('companies'), fields);
export const toUnifiedDeal = (raw: HubspotRecord) => toUnified(spec('deals'), raw);
export const toHubspotDeal = (fields: Readonly<Record<string, unknown>>) => toHubspot(spec('deals'), fields);
export const toUnifiedMeeting = (raw: HubspotRecord) => toUnified(spec('meetings'), raw);
export const toHubspotMeeting = (fields: Readonly<Record<string, unknown>>) =>
  toHubspot(spec('meetings'), fields);
export const toUnifiedTask = (raw: HubspotRecord) => toUnified(spec('tasks'), raw);
export const toHubspotTask = (fields: Readonly<Record<string, unknown>>) => toHubspot(spec('tasks'), fields);
export const toUnifiedEmail = (raw: HubspotRecord) => toUnified(spec('emails'), raw);
export const toHubspotEmail = (fields: Readonly<Record<string, unknown>>) =>
  toHubspot(spec('emails'), fields);

export type { ObjectSpec };
