import { GraphError, graphErrors } from '../graph-errors';
import { parseRecurrence, type Recurrence } from './recurrence';
import { requireZone, wallMs, wallToInstant } from './time-zones';

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A start or end as the client wrote it, and the instant it stands for. */
export interface ZonedTime {
  /** Wall-clock milliseconds (the wall time read as if UTC). */
  wall: number;
  /** The zone as the client named it (Windows or IANA), kept for originalStartTimeZone. */
  timeZone: string;
  /** The instant; for an all-day event, the wall time itself (all-day events float). */
  at: number;
}

export interface EventLocation {
  displayName: string;
  locationEmailAddress?: string;
  locationUri?: string;
  address?: Json;
  coordinates?: Json;
}

export const RESPONSES = [
  'none',
  'organizer',
  'tentativelyAccepted',
  'accepted',
  'declined',
  'notResponded',
] as const;

export interface Attendee {
  type: 'required' | 'optional' | 'resource';
  emailAddress: { name: string; address: string };
  status: { response: (typeof RESPONSES)[number]; time: string };
}

/** Everything a client may write on an event. */
export interface EventFields {
  subject: string;
  body: { contentType: 'text' | 'html'; content: string };
  start: ZonedTime;
  end: ZonedTime;
  isAllDay: boolean;
  location: EventLocation | null;
  locations: EventLocation[];
  attendees: Attendee[];
  categories: string[];
  importance: 'low' | 'normal' | 'high';
  sensitivity: 'normal' | 'personal' | 'private' | 'confidential';
  showAs: 'unknown' | 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere';
  isReminderOn: boolean;
  reminderMinutesBeforeStart: number;
  responseRequested: boolean;
  allowNewTimeProposals: boolean;
  hideAttendees: boolean;
  isOnlineMeeting: boolean;
  onlineMeetingProvider: 'unknown' | 'skypeForBusiness' | 'skypeForConsumer' | 'teamsForBusiness';
  recurrence: Recurrence | null;
}

/** Graph's "no time" for response times nobody gave. */
export const NO_TIME = '0001-01-01T00:00:00Z';

/** Properties Graph computes: a client echoing them back is ignored, not refused. */
const READ_ONLY = new Set([
  'id',
  'changeKey',
  'createdDateTime',
  'lastModifiedDateTime',
  'iCalUId',
  'bodyPreview',
  'organizer',
  'isOrganizer',
  'isCancelled',
  'isDraft',
  'type',
  'seriesMasterId',
  'originalStart',
  'originalStartTimeZone',
  'originalEndTimeZone',
  'webLink',
  'onlineMeeting',
  'onlineMeetingUrl',
  'hasAttachments',
  'responseStatus',
  'cancelledOccurrences',
]);

/** Properties the store handles beside the fields (idempotency key, our tags). */
const HANDLED_ELSEWHERE = new Set(['transactionId', 'singleValueExtendedProperties']);

const ENUMS = {
  importance: ['low', 'normal', 'high'],
  sensitivity: ['normal', 'personal', 'private', 'confidential'],
  showAs: ['unknown', 'free', 'tentative', 'busy', 'oof', 'workingElsewhere'],
  onlineMeetingProvider: ['unknown', 'skypeForBusiness', 'skypeForConsumer', 'teamsForBusiness'],
} as const;

const BOOLEANS = [
  'isAllDay',
  'isReminderOn',
  'responseRequested',
  'allowNewTimeProposals',
  'hideAttendees',
  'isOnlineMeeting',
] as const;

export const invalidProperty = (name: string, why: string): GraphError =>
  new GraphError(400, 'ErrorInvalidRequest', `Invalid value for property '${name}': ${why}`);

/**
 * Applies a create or PATCH body to an event's fields (a PATCH replaces the properties it
 * names, whole). Unknown properties are refused as Graph refuses them; read-only ones are
 * ignored. Times are checked after the merge, so a PATCH may move start alone.
 */
export function applyEventWrite(base: EventFields | undefined, body: unknown): EventFields {
  if (!isObject(body)) throw graphErrors.badRequest('The request body must be a JSON object.');
  for (const key of Object.keys(body)) {
    if (key.includes('@') || READ_ONLY.has(key) || HANDLED_ELSEWHERE.has(key) || key in WRITERS) continue;
    throw new GraphError(
      400,
      'RequestBodyRead',
      `The property '${key}' does not exist on type 'microsoft.graph.event'. Make sure to only use property names that are defined by the type or mark the type as open type.`,
    );
  }
  if (!base && (body.start == null || body.end == null))
    throw new GraphError(400, 'ErrorInvalidRequest', 'The start and end of an event are required.');
  const fields: EventFields = base ? structuredClone(base) : defaults();
  for (const [key, write] of Object.entries(WRITERS)) if (key in body) write(fields, body[key]);
  return checkTimes(fields);
}

type Writer = (fields: EventFields, value: unknown) => void;

const WRITERS: Record<string, Writer> = {
  subject: (f, v) => {
    f.subject = v == null ? '' : str('subject', v);
  },
  body: (f, v) => {
    if (v == null) {
      f.body = { contentType: 'text', content: '' };
      return;
    }
    if (!isObject(v)) throw invalidProperty('body', 'an itemBody object is expected.');
    const type = v.contentType == null ? 'text' : str('body.contentType', v.contentType).toLowerCase();
    if (type !== 'text' && type !== 'html') throw invalidProperty('body.contentType', 'text or html.');
    f.body = { contentType: type, content: v.content == null ? '' : str('body.content', v.content) };
  },
  start: (f, v) => {
    f.start = zonedTime('start', v);
  },
  end: (f, v) => {
    f.end = zonedTime('end', v);
  },
  location: (f, v) => {
    f.location = v == null ? null : location('location', v);
    // Graph keeps the two in step: setting location replaces locations with it.
    f.locations = f.location && f.location.displayName !== '' ? [f.location] : [];
  },
  locations: (f, v) => {
    if (v == null) return;
    if (!Array.isArray(v)) throw invalidProperty('locations', 'an array is expected.');
    f.locations = v.map((l) => location('locations', l));
    if (f.locations.length > 0)
      f.location = { displayName: f.locations.map((l) => l.displayName).join('; ') };
  },
  attendees: (f, v) => {
    f.attendees = v == null ? [] : arrayOf('attendees', v).map(attendee);
  },
  categories: (f, v) => {
    f.categories = v == null ? [] : arrayOf('categories', v).map((c) => str('categories', c));
  },
  reminderMinutesBeforeStart: (f, v) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw invalidProperty('reminderMinutesBeforeStart', 'a whole number of minutes is expected.');
    f.reminderMinutesBeforeStart = v;
  },
  recurrence: (f, v) => {
    f.recurrence = v == null ? null : parseRecurrence(v, f.start.timeZone);
  },
  ...Object.fromEntries(
    Object.entries(ENUMS).map(([key, values]) => [
      key,
      (f: EventFields, v: unknown) => {
        const found = (values as readonly string[]).find((e) => e.toLowerCase() === String(v).toLowerCase());
        if (typeof v !== 'string' || !found) throw invalidProperty(key, `one of ${values.join(', ')}.`);
        (f as unknown as Json)[key] = found;
      },
    ]),
  ),
  ...Object.fromEntries(
    BOOLEANS.map((key) => [
      key,
      (f: EventFields, v: unknown) => {
        if (typeof v !== 'boolean') throw invalidProperty(key, 'true or false.');
        (f as unknown as Json)[key] = v;
      },
    ]),
  ),
};

/** A new event before its body is applied: Graph's documented defaults. */
function defaults(): EventFields {
  const zero = { wall: 0, timeZone: 'UTC', at: 0 };
  return {
    subject: '',
    body: { contentType: 'text', content: '' },
    start: zero,
    end: zero,
    isAllDay: false,
    location: null,
    locations: [],
    attendees: [],
    categories: [],
    importance: 'normal',
    sensitivity: 'normal',
    showAs: 'busy',
    isReminderOn: true,
    reminderMinutesBeforeStart: 15,
    responseRequested: true,
    allowNewTimeProposals: true,
    hideAttendees: false,
    isOnlineMeeting: false,
    onlineMeetingProvider: 'unknown',
    recurrence: null,
  };
}

/** A dateTimeTimeZone as written; its instant is settled once the whole body is read (checkTimes). */
function zonedTime(name: string, v: unknown): ZonedTime {
  if (!isObject(v) || typeof v.dateTime !== 'string')
    throw invalidProperty(name, 'a dateTimeTimeZone with a dateTime is expected.');
  const timeZone = v.timeZone == null ? 'UTC' : str(`${name}.timeZone`, v.timeZone);
  const zone = requireZone(timeZone);
  const offset = /(Z|[+-]\d{2}:\d{2})$/i.exec(v.dateTime);
  // Graph's dateTime has no offset. A zero one beside a UTC zone is harmless; any other is
  // refused: how Graph would reconcile it with timeZone is not documented.
  if (offset && !(zone === 'UTC' && /^(Z|[+-]00:00)$/i.test(offset[1]!)))
    throw invalidProperty(
      `${name}.dateTime`,
      'give the wall-clock time without an offset, and the zone in timeZone.',
    );
  const wall = wallMs(offset ? v.dateTime.slice(0, -offset[1]!.length) : v.dateTime);
  if (wall === undefined)
    throw invalidProperty(`${name}.dateTime`, `'${v.dateTime}' is not a date and time.`);
  return { wall, timeZone, at: wall };
}

/** All-day events float: their instants are their wall times, whatever zone they name. */
function checkTimes(f: EventFields): EventFields {
  if (f.isAllDay) {
    f.start = { ...f.start, at: f.start.wall };
    f.end = { ...f.end, at: f.end.wall };
    if (f.start.wall % 86_400_000 !== 0 || f.end.wall % 86_400_000 !== 0 || f.end.wall === f.start.wall)
      throw new GraphError(
        400,
        'ErrorPropertyValidationFailure',
        'An all-day event must start and end at midnight, at least a day apart.',
      );
  } else {
    f.start = { ...f.start, at: wallToInstant(f.start.wall, requireZone(f.start.timeZone)) };
    f.end = { ...f.end, at: wallToInstant(f.end.wall, requireZone(f.end.timeZone)) };
  }
  if (f.end.at < f.start.at)
    throw new GraphError(400, 'ErrorInvalidRequest', 'The end of an event cannot come before its start.');
  return f;
}

function location(name: string, v: unknown): EventLocation {
  if (!isObject(v)) throw invalidProperty(name, 'a location object is expected.');
  const out: EventLocation = {
    displayName: v.displayName == null ? '' : str(`${name}.displayName`, v.displayName),
  };
  if (typeof v.locationEmailAddress === 'string') out.locationEmailAddress = v.locationEmailAddress;
  if (typeof v.locationUri === 'string') out.locationUri = v.locationUri;
  if (isObject(v.address)) out.address = v.address;
  if (isObject(v.coordinates)) out.coordinates = v.coordinates;
  return out;
}

function attendee(v: unknown): Attendee {
  if (!isObject(v) || !isObject(v.emailAddress) || typeof v.emailAddress.address !== 'string')
    throw invalidProperty('attendees', 'each attendee needs an emailAddress with an address.');
  const type = v.type == null ? 'required' : str('attendees.type', v.type).toLowerCase();
  if (type !== 'required' && type !== 'optional' && type !== 'resource')
    throw invalidProperty('attendees.type', 'required, optional or resource.');
  const status = isObject(v.status) ? v.status : {};
  const response = RESPONSES.find((r) => r.toLowerCase() === String(status.response ?? 'none').toLowerCase());
  if (!response) throw invalidProperty('attendees.status.response', `one of ${RESPONSES.join(', ')}.`);
  const name = v.emailAddress.name;
  return {
    type,
    emailAddress: {
      name: typeof name === 'string' ? name : v.emailAddress.address,
      address: v.emailAddress.address,
    },
    status: { response, time: typeof status.time === 'string' ? status.time : NO_TIME },
  };
}

function str(name: string, v: unknown): string {
  if (typeof v !== 'string') throw invalidProperty(name, 'a string is expected.');
  return v;
}

function arrayOf(name: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) throw invalidProperty(name, 'an array is expected.');
  return v;
}
