import { createHash } from 'node:crypto';
import type { SourceChangeInput } from '@syncline/core';
import type { calendar_v3 } from 'googleapis/build/src/apis/calendar';
import type { ChangeScope, MeetingAttendee, MeetingFields } from '../shared/unified-records';

export type { ChangeScope, MeetingAttendee, MeetingFields };

type GoogleEvent = calendar_v3.Schema$Event;

/** Keys of ours in `extendedProperties.private`: the origin tag and our entity id. */
export const ORIGIN_KEY = 'synclineOrigin';
export const ENTITY_KEY = 'synclineEntityId';
export const ORIGIN_VALUE = 'syncline';

const stripQuotes = (etag: string) => etag.replace(/^W\//, '').replace(/"/g, '');

/** Same event version → same key, on every redelivery and after any full resync. */
export function calendarEventKey(event: Pick<GoogleEvent, 'id' | 'etag' | 'updated' | 'status'>): string {
  const version = event.etag ? stripQuotes(event.etag) : (event.updated ?? 'unknown');
  return `${event.id}:${event.status === 'cancelled' ? 'cancelled:' : ''}${version}`;
}

const time = (t: calendar_v3.Schema$EventDateTime | undefined): string | null => {
  if (t?.date) return t.date;
  if (t?.dateTime) {
    const d = new Date(t.dateTime);
    return Number.isNaN(d.getTime()) ? t.dateTime : d.toISOString();
  }
  return null;
};

export function toMeetingFields(event: GoogleEvent): MeetingFields {
  return {
    title: event.summary ?? null,
    description: event.description ?? null,
    location: event.location ?? null,
    startAt: time(event.start),
    endAt: time(event.end),
    allDay: Boolean(event.start?.date),
    status: event.status ?? null,
    organizer: event.organizer?.email ?? null,
    attendees: (event.attendees ?? [])
      .filter((a): a is calendar_v3.Schema$EventAttendee & { email: string } => typeof a.email === 'string')
      .map((a) => ({
        email: a.email,
        ...(a.displayName ? { name: a.displayName } : {}),
        responseStatus: a.responseStatus ?? 'needsAction',
        ...(a.organizer ? { organizer: true } : {}),
      })),
    iCalUID: event.iCalUID ?? null,
  };
}

/** A listed event → a change: upsert, or a tombstone for a cancelled one. */
export function toMeetingChange(event: GoogleEvent, scope: ChangeScope, receivedAt: Date): SourceChangeInput {
  if (!event.id) throw new Error('calendar event without an id');
  const eventTime = event.updated ? new Date(event.updated) : receivedAt;
  const common = {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'meeting' as const,
    externalId: event.id,
    eventKey: calendarEventKey(event),
    eventTime,
    ...(event.etag ? { providerVersion: event.etag } : {}),
  };
  if (event.status === 'cancelled') return { ...common, op: 'delete', fields: {} };
  const fields = toMeetingFields(event);
  const priv = event.extendedProperties?.private;
  return {
    ...common,
    op: 'upsert',
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
    ...(priv && (priv[ORIGIN_KEY] || priv[ENTITY_KEY]) ? { origin: { ...priv } } : {}),
  };
}

const toEventTime = (
  value: unknown,
  allDay: boolean | undefined,
): calendar_v3.Schema$EventDateTime | null => {
  if (value === null) return null;
  const s = value instanceof Date ? value.toISOString() : String(value);
  return allDay || /^\d{4}-\d{2}-\d{2}$/.test(s) ? { date: s.slice(0, 10) } : { dateTime: s };
};

/**
 * Unified meeting fields → the event body for insert (all given fields) or patch (only the
 * fields present; `null` clears). The organizer is the calendar's owner and is not written.
 */
export function toGoogleEvent(fields: Readonly<Record<string, unknown>>): GoogleEvent {
  const out: GoogleEvent = {};
  const has = (k: string) => Object.hasOwn(fields, k) && fields[k] !== undefined;
  const str = (k: string) => (fields[k] === null ? null : String(fields[k]));
  const allDay = typeof fields.allDay === 'boolean' ? fields.allDay : undefined;
  if (has('title')) out.summary = str('title');
  if (has('description')) out.description = str('description');
  if (has('location')) out.location = str('location');
  if (has('startAt')) out.start = toEventTime(fields.startAt, allDay) as calendar_v3.Schema$EventDateTime;
  if (has('endAt')) out.end = toEventTime(fields.endAt, allDay) as calendar_v3.Schema$EventDateTime;
  if (has('status') && (fields.status === 'confirmed' || fields.status === 'tentative'))
    out.status = fields.status;
  if (has('attendees')) {
    const list = Array.isArray(fields.attendees) ? fields.attendees : [];
    out.attendees = list.flatMap((a): calendar_v3.Schema$EventAttendee[] => {
      if (typeof a === 'string') return [{ email: a }];
      if (typeof a !== 'object' || a === null || typeof (a as MeetingAttendee).email !== 'string') return [];
      const attendee = a as MeetingAttendee;
      return [
        {
          email: attendee.email,
          ...(attendee.name ? { displayName: attendee.name } : {}),
          ...(attendee.responseStatus ? { responseStatus: attendee.responseStatus } : {}),
        },
      ];
    });
  }
  return out;
}

/** Our origin tag for a write, merged into the event's private extended properties. */
export const originTag = (entityId: string): calendar_v3.Schema$Event['extendedProperties'] => ({
  private: { [ORIGIN_KEY]: ORIGIN_VALUE, [ENTITY_KEY]: entityId },
});

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * A client-chosen event id from the idempotency key: SHA-256 in base32hex (52 characters of
 * `0-9a-v`, inside Google's 5–1024), so a retried insert names the same event and gets 409.
 */
export function eventIdFor(idempotencyKey: string): string {
  const bytes = createHash('sha256').update(`syncline:${idempotencyKey}`).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32HEX[(value << (5 - bits)) & 31];
  return out;
}
