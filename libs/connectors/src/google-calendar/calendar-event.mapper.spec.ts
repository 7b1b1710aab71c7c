import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  calendarEventKey,
  eventIdFor,
  toGoogleEvent,
  toMeetingChange,
  toMeetingFields,
} from './calendar-event.mapper';

// Shapes as the Calendar API (and the emulator) answer them.
const recorded = {
  kind: 'calendar#event',
  etag: '"3181161784712000"',
  id: 'c4ok1d3h6sr3gbb4c5j68b9k6g',
  status: 'confirmed',
  htmlLink: 'https://www.google.com/calendar/event?eid=YzRvaw',
  created: '2030-01-02T09:00:00.000Z',
  updated: '2030-01-02T09:30:00.356Z',
  summary: 'Quarterly review',
  location: 'Room 4',
  creator: { email: 'dana@example.com', self: true },
  organizer: { email: 'dana@example.com', self: true },
  start: { dateTime: '2030-01-10T10:00:00+01:00', timeZone: 'Europe/Paris' },
  end: { dateTime: '2030-01-10T11:00:00+01:00', timeZone: 'Europe/Paris' },
  iCalUID: 'c4ok1d3h6sr3gbb4c5j68b9k6g@google.com',
  sequence: 0,
  attendees: [
    { email: 'dana@example.com', organizer: true, self: true, responseStatus: 'accepted' },
    { email: 'Bob@Example.com', displayName: 'Bob', responseStatus: 'tentative' },
    { email: 'eve@example.com' },
  ],
  extendedProperties: { private: { synclineOrigin: 'syncline', synclineEntityId: 'ent-1' } },
};
const cancelled = {
  kind: 'calendar#event',
  etag: '"3181161784999000"',
  id: 'c4ok1d3h6sr3gbb4c5j68b9k6g',
  status: 'cancelled',
};
const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};

describe('calendar event mapper', () => {
  it('maps an event to a meeting with participants, organizer, origin and per-field times', () => {
    const change = toMeetingChange(recorded, scope, new Date());
    expect(change).toMatchObject({
      entityType: 'meeting',
      op: 'upsert',
      externalId: recorded.id,
      eventKey: `${recorded.id}:3181161784712000`,
      providerVersion: recorded.etag,
      eventTime: new Date(recorded.updated),
      origin: { synclineOrigin: 'syncline', synclineEntityId: 'ent-1' },
      fields: {
        title: 'Quarterly review',
        startAt: '2030-01-10T09:00:00.000Z',
        endAt: '2030-01-10T10:00:00.000Z',
        allDay: false,
        organizer: 'dana@example.com',
        iCalUID: recorded.iCalUID,
        attendees: [
          { email: 'dana@example.com', responseStatus: 'accepted', organizer: true },
          { email: 'Bob@Example.com', name: 'Bob', responseStatus: 'tentative' },
          { email: 'eve@example.com', responseStatus: 'needsAction' },
        ],
      },
    });
    expect(change.fieldTimes?.title).toEqual(new Date(recorded.updated));
  });

  it('maps a cancelled event (id and etag only) to a tombstone with a stable key', () => {
    const seenAt = new Date('2030-02-01T00:00:00Z');
    const change = toMeetingChange(cancelled, scope, seenAt);
    expect(change).toMatchObject({ op: 'delete', fields: {}, eventTime: seenAt });
    expect(change.eventKey).toBe(calendarEventKey(cancelled));
    expect(toMeetingChange(cancelled, scope, new Date()).eventKey).toBe(change.eventKey);
  });

  it('goes back to an event body that maps to the same fields', () => {
    const fields = toMeetingFields(recorded);
    const body = toGoogleEvent({ ...fields });
    expect(body).toMatchObject({
      summary: 'Quarterly review',
      start: { dateTime: '2030-01-10T09:00:00.000Z' },
    });
    expect(body).not.toHaveProperty('organizer');
    // Google itself flags the organizer's attendee entry; we never write that flag.
    const attendees = body.attendees?.map((a) =>
      a.email === 'dana@example.com' ? { ...a, organizer: true } : a,
    );
    const roundTrip = toMeetingFields({
      ...body,
      attendees,
      organizer: recorded.organizer,
      iCalUID: recorded.iCalUID,
      status: 'confirmed',
    });
    expect(contentHash({ ...roundTrip })).toBe(contentHash({ ...fields }));
  });

  it('writes all-day dates as dates and clears fields with null', () => {
    expect(toGoogleEvent({ startAt: '2030-05-01', endAt: '2030-05-02', location: null })).toEqual({
      start: { date: '2030-05-01' },
      end: { date: '2030-05-02' },
      location: null,
    });
  });

  it('derives a base32hex event id from the idempotency key, the same every time', () => {
    const id = eventIdFor('entity-1:target-2:heads-abc');
    expect(id).toMatch(/^[0-9a-v]{52}$/);
    expect(eventIdFor('entity-1:target-2:heads-abc')).toBe(id);
    expect(eventIdFor('entity-1:target-2:heads-abd')).not.toBe(id);
  });

  it('uses only unified meeting field names', () => {
    for (const field of Object.keys(toMeetingFields(recorded)))
      expect(isUnifiedField('meeting', field), field).toBe(true);
  });
});
