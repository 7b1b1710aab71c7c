import { googleErrors } from './google-errors';
import { parseRfc3339 } from './query-params';

export const RESPONSE_STATUSES = ['needsAction', 'declined', 'tentative', 'accepted'] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];
const EVENT_STATUSES = ['confirmed', 'tentative', 'cancelled'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export interface EventDateTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

export interface EventAttendee {
  email: string;
  displayName?: string;
  responseStatus: ResponseStatus;
  optional?: boolean;
  comment?: string;
  additionalGuests?: number;
  organizer?: boolean;
  self?: boolean;
}

export interface EventPerson {
  email: string;
  displayName?: string;
  self?: boolean;
}

export interface ExtendedProperties {
  private?: Record<string, string>;
  shared?: Record<string, string>;
}

/** The fields a client may write. Everything else on an event is the server's. */
export interface EventFields {
  status: EventStatus;
  summary?: string;
  description?: string;
  location?: string;
  colorId?: string;
  start: EventDateTime;
  end: EventDateTime;
  recurrence?: string[];
  transparency?: 'opaque' | 'transparent';
  visibility?: 'default' | 'public' | 'private' | 'confidential';
  attendees?: EventAttendee[];
  extendedProperties?: ExtendedProperties;
  reminders: { useDefault: boolean; overrides?: { method: string; minutes: number }[] };
  source?: { title?: string; url: string };
  guestsCanModify?: boolean;
  guestsCanInviteOthers?: boolean;
  guestsCanSeeOtherGuests?: boolean;
}

export interface CalendarEvent extends EventFields {
  kind: 'calendar#event';
  etag: string;
  id: string;
  htmlLink: string;
  created: string;
  updated: string;
  creator: EventPerson;
  organizer: EventPerson;
  iCalUID: string;
  sequence: number;
}

/** What a list returns for a deleted event: Google may send nothing but the id. */
export interface CancelledEventStub {
  kind: 'calendar#event';
  etag: string;
  id: string;
  status: 'cancelled';
}

const WRITABLE_KEYS = [
  'status',
  'summary',
  'description',
  'location',
  'colorId',
  'start',
  'end',
  'recurrence',
  'transparency',
  'visibility',
  'attendees',
  'extendedProperties',
  'reminders',
  'source',
  'guestsCanModify',
  'guestsCanInviteOthers',
  'guestsCanSeeOtherGuests',
] as const;

export type JsonObject = Record<string, unknown>;

export const isPlainObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The writable part of a request body; read-only fields a client echoes back are ignored, as Google does. */
export function pickWritable(body: unknown): JsonObject {
  if (!isPlainObject(body)) throw googleErrors.parseError('The request body must be a JSON object.');
  const out: JsonObject = {};
  for (const key of WRITABLE_KEYS) if (key in body) out[key] = body[key];
  return out;
}

/**
 * Google's patch semantics: objects merge field by field (so one extended property can be
 * changed alone), arrays are replaced whole, and null clears a field.
 */
export function mergePatch(target: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key]))
      out[key] = mergePatch(out[key] as JsonObject, value);
    else out[key] = value;
  }
  return out;
}

/** Validates client-written fields into an event's writable part, with Google's 400s. */
export function validateEventFields(raw: JsonObject, organizerEmail: string): EventFields {
  const status = optionalEnum(raw, 'status', EVENT_STATUSES) ?? 'confirmed';
  if (raw.start === undefined) throw googleErrors.required('Missing start time.');
  if (raw.end === undefined) throw googleErrors.required('Missing end time.');
  const start = parseDateTime(raw.start, 'start');
  const end = parseDateTime(raw.end, 'end');
  if ((start.date === undefined) !== (end.date === undefined)) {
    throw googleErrors.invalid('Start and end times must either both be date or both be dateTime.');
  }
  if (instantOf(end) < instantOf(start)) throw googleErrors.timeRangeEmpty();
  const fields: EventFields = {
    status,
    start,
    end,
    reminders: parseReminders(raw.reminders),
  };
  for (const key of ['summary', 'description', 'location', 'colorId'] as const) {
    const v = optionalString(raw, key);
    if (v !== undefined) fields[key] = v;
  }
  for (const key of ['guestsCanModify', 'guestsCanInviteOthers', 'guestsCanSeeOtherGuests'] as const) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw googleErrors.invalid(`Invalid value for: ${key}`);
    fields[key] = v;
  }
  const transparency = optionalEnum(raw, 'transparency', ['opaque', 'transparent'] as const);
  if (transparency) fields.transparency = transparency;
  const visibility = optionalEnum(raw, 'visibility', [
    'default',
    'public',
    'private',
    'confidential',
  ] as const);
  if (visibility) fields.visibility = visibility;
  if (raw.recurrence !== undefined) {
    if (!Array.isArray(raw.recurrence) || !raw.recurrence.every((r) => typeof r === 'string')) {
      throw googleErrors.invalid('Invalid recurrence rule.');
    }
    fields.recurrence = raw.recurrence as string[];
  }
  if (raw.attendees !== undefined) fields.attendees = parseAttendees(raw.attendees, organizerEmail);
  if (raw.extendedProperties !== undefined) {
    const ext = parseExtendedProperties(raw.extendedProperties);
    if (ext) fields.extendedProperties = ext;
  }
  if (raw.source !== undefined) {
    if (!isPlainObject(raw.source) || typeof raw.source.url !== 'string')
      throw googleErrors.invalid('Invalid source.');
    fields.source = {
      url: raw.source.url,
      ...(typeof raw.source.title === 'string' ? { title: raw.source.title } : {}),
    };
  }
  return fields;
}

/** The instant an event boundary stands for; an all-day date counts from midnight UTC. */
export function instantOf(dt: EventDateTime): number {
  if (dt.date !== undefined) return Date.parse(`${dt.date}T00:00:00Z`);
  return parseRfc3339(dt.dateTime ?? '') ?? Number.NaN;
}

function parseDateTime(value: unknown, field: 'start' | 'end'): EventDateTime {
  if (!isPlainObject(value)) throw googleErrors.invalid(`Invalid ${field} time.`);
  const timeZone = value.timeZone;
  if (timeZone !== undefined && (typeof timeZone !== 'string' || !isTimeZone(timeZone))) {
    throw googleErrors.invalid(`Invalid time zone definition for ${field} time.`);
  }
  const tz = timeZone === undefined ? {} : { timeZone };
  if (typeof value.date === 'string' && value.dateTime === undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value.date) || Number.isNaN(Date.parse(value.date))) {
      throw googleErrors.invalid(`Invalid ${field} time.`);
    }
    return { date: value.date, ...tz };
  }
  if (typeof value.dateTime === 'string' && value.date === undefined) {
    if (parseRfc3339(value.dateTime) !== undefined) return { dateTime: value.dateTime, ...tz };
    // A local time is allowed when a time zone says where it is; Google answers with the offset.
    if (typeof timeZone === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value.dateTime)) {
      return { dateTime: withOffset(value.dateTime, timeZone), timeZone };
    }
    throw googleErrors.invalid(`Invalid ${field} time.`);
  }
  throw googleErrors.required(`Missing ${field} time.`);
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Offset of a zone at an instant, in ms (positive east of UTC). */
function zoneOffsetMs(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(ms / 1000) * 1000;
}

function withOffset(local: string, timeZone: string): string {
  const full = local.length === 16 ? `${local}:00` : local;
  const wall = Date.parse(`${full}Z`);
  const offset = zoneOffsetMs(wall - zoneOffsetMs(wall, timeZone), timeZone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset) / 60_000;
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${full}${sign}${hh}:${mm}`;
}

function parseAttendees(value: unknown, organizerEmail: string): EventAttendee[] {
  if (!Array.isArray(value)) throw googleErrors.invalid('Invalid attendees.');
  return value.map((a): EventAttendee => {
    if (!isPlainObject(a) || typeof a.email !== 'string' || a.email === '') {
      throw googleErrors.required('Missing attendee email.');
    }
    const email = a.email.toLowerCase();
    const responseStatus = optionalEnum(a, 'responseStatus', RESPONSE_STATUSES) ?? 'needsAction';
    const attendee: EventAttendee = { email, responseStatus };
    const displayName = optionalString(a, 'displayName');
    if (displayName !== undefined) attendee.displayName = displayName;
    const comment = optionalString(a, 'comment');
    if (comment !== undefined) attendee.comment = comment;
    if (typeof a.optional === 'boolean') attendee.optional = a.optional;
    if (typeof a.additionalGuests === 'number') attendee.additionalGuests = a.additionalGuests;
    if (email === organizerEmail) {
      attendee.organizer = true;
      attendee.self = true;
    }
    return attendee;
  });
}

function parseExtendedProperties(value: unknown): ExtendedProperties | undefined {
  if (!isPlainObject(value)) throw googleErrors.invalid('Invalid extendedProperties.');
  const out: ExtendedProperties = {};
  for (const scope of ['private', 'shared'] as const) {
    const map = value[scope];
    if (map === undefined) continue;
    if (!isPlainObject(map)) throw googleErrors.invalid(`Invalid extendedProperties.${scope}.`);
    const entries = Object.entries(map).filter(([, v]) => v !== null);
    if (entries.some(([, v]) => typeof v !== 'string')) {
      throw googleErrors.invalid(`Extended property values must be strings (extendedProperties.${scope}).`);
    }
    if (entries.length > 0) out[scope] = Object.fromEntries(entries) as Record<string, string>;
  }
  return out.private || out.shared ? out : undefined;
}

function parseReminders(value: unknown): EventFields['reminders'] {
  if (value === undefined) return { useDefault: true };
  if (!isPlainObject(value)) throw googleErrors.invalid('Invalid reminders.');
  const overrides = Array.isArray(value.overrides)
    ? value.overrides
        .filter(isPlainObject)
        .map((o) => ({ method: String(o.method ?? 'popup'), minutes: Number(o.minutes ?? 0) }))
    : undefined;
  return { useDefault: value.useDefault === true, ...(overrides ? { overrides } : {}) };
}

function optionalString(obj: JsonObject, key: string): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw googleErrors.invalid(`Invalid value for: ${key}`);
  return v;
}

function optionalEnum<T extends string>(obj: JsonObject, key: string, allowed: readonly T[]): T | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw googleErrors.invalid(`Invalid value for: ${key}`);
  }
  return v as T;
}
