import type { EntityType } from '@syncline/core';

/** A CRM v3 record as the SDK returns it (dates parsed) or as recorded JSON (ISO strings). */
export interface HubspotRecord {
  id: string;
  properties: Record<string, string | null | undefined>;
  createdAt: Date | string;
  updatedAt: Date | string;
  archived?: boolean;
  archivedAt?: Date | string;
  propertiesWithHistory?: Record<string, readonly HubspotHistoryItem[]>;
}

export interface HubspotHistoryItem {
  value: string;
  timestamp: Date | string;
  sourceType: string;
  sourceId?: string;
}

export type HubspotObjectType = 'contacts' | 'companies' | 'deals' | 'meetings' | 'tasks' | 'emails';

type Kind = 'string' | 'number' | 'datetime';

interface ObjectSpec {
  objectType: HubspotObjectType;
  entityType: EntityType;
  /** Contacts: lastmodifieddate; everything else: hs_lastmodifieddate (!). */
  modifiedProperty: string;
  /** Unified field → [HubSpot property, value kind]. */
  fields: Readonly<Record<string, readonly [string, Kind]>>;
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
  },
  {
    objectType: 'meetings',
    entityType: 'meeting',
    modifiedProperty: 'hs_lastmodifieddate',
    fields: {
      title: ['hs_meeting_title', 'string'],
      description: ['hs_meeting_body', 'string'],
      startTime: ['hs_meeting_start_time', 'datetime'],
      endTime: ['hs_meeting_end_time', 'datetime'],
      location: ['hs_meeting_location', 'string'],
      outcome: ['hs_meeting_outcome', 'string'],
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
      status: ['hs_task_status', 'string'],
      priority: ['hs_task_priority', 'string'],
      dueDate: ['hs_timestamp', 'datetime'],
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
      direction: ['hs_email_direction', 'string'],
      status: ['hs_email_status', 'string'],
      sentAt: ['hs_timestamp', 'datetime'],
      ...owner,
    },
  },
];

/** Our unique property on every object type: the canonical entity id (upsert key, origin tag). */
export const SYNCLINE_ID_PROPERTY = 'syncline_id';

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
 * property, keeping its kind, or adds a field (a custom property) as text. A property may
 * serve one field only: a default field whose property a mapping takes is dropped.
 */
export function specsFor(mappings: Readonly<Record<string, string>> | undefined): readonly ObjectSpec[] {
  if (!mappings || Object.keys(mappings).length === 0) return OBJECT_SPECS;
  const cached = mappedSpecs.get(mappings);
  if (cached) return cached;
  const specs = OBJECT_SPECS.map((spec) => {
    const prefix = `${spec.entityType}.`;
    const overrides = Object.entries(mappings).filter(([key]) => key.startsWith(prefix));
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
  return value;
}

/** A unified value as a HubSpot property value; null clears (HubSpot takes ""). */
export function toHubspotValue(value: unknown, kind: Kind): string {
  if (value === null || value === undefined) return '';
  if (kind === 'datetime') {
    const ms = value instanceof Date ? value.getTime() : Date.parse(String(value));
    return Number.isFinite(ms) ? new Date(ms).toISOString() : String(value);
  }
  return String(value);
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

/** Pure: unified fields → HubSpot properties. Only the fields given are written; null clears. */
export function toHubspot(
  spec: ObjectSpec,
  fields: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const [field, value] of Object.entries(fields)) {
    const mapping = spec.fields[field];
    if (!mapping || value === undefined) continue;
    properties[mapping[0]] = toHubspotValue(value, mapping[1]);
  }
  return properties;
}

/** The unified field a HubSpot property maps to (webhook property changes). */
export function fieldOfProperty(spec: ObjectSpec, property: string): [string, Kind] | undefined {
  for (const [field, [p, kind]] of Object.entries(spec.fields)) if (p === property) return [field, kind];
  return undefined;
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
