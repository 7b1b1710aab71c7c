import { createHash } from 'node:crypto';
import type { SourceChangeInput } from '@syncline/core';
import type { ChangeScope, MeetingAttendee, MeetingFields } from '../shared/unified-records';

export type { ChangeScope, MeetingAttendee, MeetingFields };

/** A `dateTimeTimeZone`: a wall-clock time without an offset, and the zone it is in. */
export interface GraphDateTime {
  dateTime?: string | null;
  timeZone?: string | null;
}

export interface GraphEmailAddress {
  name?: string | null;
  address?: string | null;
}

export interface GraphAttendee {
  type?: string | null;
  emailAddress?: GraphEmailAddress | null;
  status?: { response?: string | null; time?: string | null } | null;
}

export interface GraphExtendedProperty {
  id: string;
  value: string;
}

/** The parts of Graph's `event` (and of a calendarView delta entry) the connector reads or writes. */
export interface GraphEvent {
  '@odata.etag'?: string;
  /** A delta entry for an event deleted, or gone from the view's range. */
  '@removed'?: { reason?: string };
  id?: string;
  changeKey?: string | null;
  lastModifiedDateTime?: string | null;
  subject?: string | null;
  body?: { contentType?: string | null; content?: string | null } | null;
  start?: GraphDateTime | null;
  end?: GraphDateTime | null;
  isAllDay?: boolean | null;
  isCancelled?: boolean | null;
  location?: { displayName?: string | null } | null;
  attendees?: GraphAttendee[] | null;
  organizer?: { emailAddress?: GraphEmailAddress | null } | null;
  iCalUId?: string | null;
  type?: string | null;
  seriesMasterId?: string | null;
  transactionId?: string | null;
  singleValueExtendedProperties?: GraphExtendedProperty[] | null;
}

/**
 * Our origin tag: a named single-value extended property in a property set of our own. Its
 * value carries our entity id. Graph returns it only when asked by id (`$expand`), which
 * calendarView delta does not allow, so pulls never see it.
 */
export const ORIGIN_PROPERTY_SET = '6f1c3b2a-8d4e-4f7a-9b5c-2e7d0a1f9c34';
export const ORIGIN_PROPERTY_ID = `String {${ORIGIN_PROPERTY_SET}} Name SynclineOrigin`;
const ORIGIN_PREFIX = 'syncline:';

/** The `$expand` that reads our origin tag with an event. */
export const ORIGIN_EXPAND = `singleValueExtendedProperties($filter=id eq '${ORIGIN_PROPERTY_ID}')`;

export const originTag = (entityId: string): GraphExtendedProperty[] => [
  { id: ORIGIN_PROPERTY_ID, value: `${ORIGIN_PREFIX}${entityId}` },
];

/** Exchange matches a property's type and set without case, and its name with case. */
function isOriginProperty(id: string): boolean {
  const m = /^(\w+)\s+\{([0-9a-f-]+)\}\s+Name\s+(\S.*)$/i.exec(id.trim());
  return (
    m?.[1]?.toLowerCase() === 'string' &&
    m[2]?.toLowerCase() === ORIGIN_PROPERTY_SET &&
    m[3] === 'SynclineOrigin'
  );
}

/** Our origin markers, when the event was read with its tag (`ORIGIN_EXPAND`). */
export function originOf(event: GraphEvent): Record<string, string> | undefined {
  const tag = (event.singleValueExtendedProperties ?? []).find((p) => isOriginProperty(p.id));
  if (!tag?.value.startsWith(ORIGIN_PREFIX)) return undefined;
  return { synclineOrigin: 'syncline', synclineEntityId: tag.value.slice(ORIGIN_PREFIX.length) };
}

/** Graph's etag (`W/"<changeKey>"`) without its weak marker and quotes. */
const versionOf = (event: GraphEvent): string =>
  event['@odata.etag']?.replace(/^W\//, '').replace(/"/g, '') ??
  event.changeKey ??
  event.lastModifiedDateTime ??
  'unknown';

/** Same event version → same key, on every redelivery and after any full resync. */
export function outlookEventKey(event: GraphEvent): string {
  return `${event.id}:${event.isCancelled ? 'cancelled:' : ''}${versionOf(event)}`;
}

/**
 * A delta `@removed` entry names the event only: its key is the id and the delta round that
 * reported it (`round`: a hash of the link the round started from). A redelivery of that
 * round has the same key; a later removal of the same id (an event that left the range and
 * came back) is a new one.
 */
export function removedEventKey(id: string, round: string): string {
  return `${id}:removed:${round}`;
}

/** A short, stable name for the delta round that began at `deltaLink`. */
export const roundOf = (deltaLink: string): string =>
  createHash('sha256').update(deltaLink).digest('base64url').slice(0, 22);

const WALL = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2}))?(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * A Graph timestamp or wall time as an instant. Graph writes seven fractional digits and,
 * for `dateTimeTimeZone`, no offset: every request asks for UTC (`outlook.timezone`), so a
 * time without an offset is read as UTC. Undefined when it is not a time.
 */
export function graphInstant(value: string | null | undefined): Date | undefined {
  const m = value ? WALL.exec(value.trim()) : null;
  if (!m) return undefined;
  const [, date, hm, s, frac, offset] = m;
  const ms = (frac ?? '').padEnd(3, '0').slice(0, 3);
  const d = new Date(`${date}T${hm}:${s ?? '00'}.${ms}${offset ?? 'Z'}`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const time = (t: GraphDateTime | null | undefined, allDay: boolean): string | null => {
  if (!t?.dateTime) return null;
  // All-day events float: their midnights are the dates, whatever the zone.
  if (allDay) return t.dateTime.slice(0, 10);
  return graphInstant(t.dateTime)?.toISOString() ?? t.dateTime;
};

/** Graph's response → the unified one (the owner's view of each attendee). */
const RESPONSES: Readonly<Record<string, string>> = {
  none: 'needsAction',
  notresponded: 'needsAction',
  organizer: 'accepted',
  accepted: 'accepted',
  tentativelyaccepted: 'tentative',
  declined: 'declined',
};

const GRAPH_RESPONSES: Readonly<Record<string, string>> = {
  needsAction: 'none',
  accepted: 'accepted',
  tentative: 'tentativelyAccepted',
  declined: 'declined',
};

const text = (s: string | null | undefined): string | null => (s ? s : null);

/**
 * A live event → unified meeting fields. The organizer is not among Graph's attendees; an
 * attendee with the organizer's address is flagged, as Google flags it. Graph names an
 * attendee by address when it has no name: that name is left out, as Google leaves it out.
 * Outlook events have no status of their own (a cancelled one is a delete): `confirmed`.
 */
export function toMeetingFields(event: GraphEvent): MeetingFields {
  const allDay = event.isAllDay === true;
  const organizer = text(event.organizer?.emailAddress?.address);
  return {
    title: text(event.subject),
    description: text(event.body?.content),
    location: text(event.location?.displayName),
    startAt: time(event.start, allDay),
    endAt: time(event.end, allDay),
    allDay,
    status: event.isCancelled ? 'cancelled' : 'confirmed',
    organizer,
    attendees: (event.attendees ?? []).flatMap((a): MeetingAttendee[] => {
      const email = a.emailAddress?.address;
      if (!email) return [];
      const name = a.emailAddress?.name;
      const response = a.status?.response ?? 'none';
      const isOrganizer = organizer !== null && email.toLowerCase() === organizer.toLowerCase();
      return [
        {
          email,
          ...(name && name.toLowerCase() !== email.toLowerCase() ? { name } : {}),
          responseStatus: isOrganizer ? 'accepted' : (RESPONSES[response.toLowerCase()] ?? response),
          ...(isOrganizer ? { organizer: true } : {}),
        },
      ];
    }),
    iCalUID: text(event.iCalUId),
  };
}

const parseTime = (event: GraphEvent, receivedAt: Date): Date =>
  graphInstant(event.lastModifiedDateTime) ?? receivedAt;

/** A listed event → a change: upsert, or a tombstone for a cancelled one. */
export function toMeetingChange(event: GraphEvent, scope: ChangeScope, receivedAt: Date): SourceChangeInput {
  if (!event.id) throw new Error('Outlook event without an id');
  const eventTime = parseTime(event, receivedAt);
  const common = {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'meeting' as const,
    externalId: event.id,
    eventKey: outlookEventKey(event),
    eventTime,
    ...(event['@odata.etag'] ? { providerVersion: event['@odata.etag'] } : {}),
  };
  if (event.isCancelled) return { ...common, op: 'delete', fields: {} };
  const fields = toMeetingFields(event);
  const origin = originOf(event);
  return {
    ...common,
    op: 'upsert',
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
    ...(origin ? { origin } : {}),
  };
}

/** A delta `@removed` entry → a tombstone, keyed by the round that reported it. */
export function toRemovedChange(
  id: string,
  scope: ChangeScope,
  receivedAt: Date,
  round: string,
): SourceChangeInput {
  return {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'meeting',
    externalId: id,
    op: 'delete',
    eventKey: removedEventKey(id, round),
    eventTime: receivedAt,
    fields: {},
  };
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A unified time → Graph's `dateTimeTimeZone` in UTC (no offset in `dateTime`, as Graph wants it). */
function toGraphTime(value: unknown, allDay: boolean): GraphDateTime | null {
  if (value === null) return null;
  const s = value instanceof Date ? value.toISOString() : String(value);
  if (allDay) return { dateTime: `${s.slice(0, 10)}T00:00:00`, timeZone: 'UTC' };
  const at = new Date(s);
  if (Number.isNaN(at.getTime())) return { dateTime: s, timeZone: 'UTC' };
  return { dateTime: at.toISOString().slice(0, 23), timeZone: 'UTC' };
}

/**
 * Unified meeting fields → the body of a create (every field given) or a PATCH (only the
 * fields present; `null` clears). `isAllDay` goes with any time written: from `allDay`, else
 * from the form of `startAt`. Not written: `organizer` (the mailbox's owner), `iCalUID`,
 * `status` (Outlook has none; a cancellation is a delete). Attendees are written as required
 * ones; their responses are the attendees' own, which Graph keeps as it sees them.
 */
export function toGraphEvent(fields: Readonly<Record<string, unknown>>): GraphEvent {
  const out: GraphEvent = {};
  const has = (k: string) => Object.hasOwn(fields, k) && fields[k] !== undefined;
  const str = (k: string) => (fields[k] === null ? null : String(fields[k]));
  if (has('title')) out.subject = str('title');
  if (has('description')) out.body = { contentType: 'text', content: str('description') ?? '' };
  if (has('location')) out.location = { displayName: str('location') ?? '' };
  const allDay =
    typeof fields.allDay === 'boolean'
      ? fields.allDay
      : has('startAt') && fields.startAt !== null
        ? DATE_ONLY.test(String(fields.startAt))
        : undefined;
  if (has('startAt')) out.start = toGraphTime(fields.startAt, allDay === true);
  if (has('endAt')) out.end = toGraphTime(fields.endAt, allDay === true);
  if (allDay !== undefined && (has('startAt') || has('endAt') || has('allDay'))) out.isAllDay = allDay;
  if (has('attendees')) {
    const list = Array.isArray(fields.attendees) ? fields.attendees : [];
    out.attendees = list.flatMap((a): GraphAttendee[] => {
      if (typeof a === 'string') return [{ type: 'required', emailAddress: { address: a } }];
      if (typeof a !== 'object' || a === null || typeof (a as MeetingAttendee).email !== 'string') return [];
      const attendee = a as MeetingAttendee;
      const response = GRAPH_RESPONSES[attendee.responseStatus];
      return [
        {
          type: 'required',
          emailAddress: { address: attendee.email, ...(attendee.name ? { name: attendee.name } : {}) },
          ...(response ? { status: { response } } : {}),
        },
      ];
    });
  }
  return out;
}

/**
 * The `transactionId` of a create, from its idempotency key: a GUID-shaped SHA-256 (version 5
 * and variant bits set), so a retried create names the same transaction and Graph makes one
 * event.
 */
export function transactionIdFor(idempotencyKey: string): string {
  const bytes = createHash('sha256').update(`syncline:${idempotencyKey}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
