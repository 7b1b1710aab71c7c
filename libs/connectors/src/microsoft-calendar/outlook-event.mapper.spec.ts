import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  type GraphEvent,
  graphInstant,
  ORIGIN_PROPERTY_ID,
  originOf,
  originTag,
  outlookEventKey,
  roundOf,
  toGraphEvent,
  toMeetingChange,
  toMeetingFields,
  toRemovedChange,
  transactionIdFor,
} from './outlook-event.mapper';

// Shapes as Graph (and the emulator) answer with `Prefer: outlook.timezone="UTC"` and
// `outlook.body-content-type="text"`.
const recorded = {
  '@odata.type': '#microsoft.graph.event',
  '@odata.etag': 'W/"DwAAABYAAABPXDmYCw0OS6ujjjrU6K2bAAAD2aYB"',
  id: 'AAMkADU5NTYxYjA4LTQ0ZGMtNDcyMi1iYzVlLTExYjRiMDk1ZDNiNwBGAAAAAAA=',
  createdDateTime: '2030-01-02T09:00:00.0000000Z',
  lastModifiedDateTime: '2030-01-02T09:30:00.3561234Z',
  changeKey: 'DwAAABYAAABPXDmYCw0OS6ujjjrU6K2bAAAD2aYB',
  originalStartTimeZone: 'Romance Standard Time',
  originalEndTimeZone: 'Romance Standard Time',
  iCalUId: '040000008200E00074C5B7101A82E00800000000D0C1A6A7F1B8DA0100000000000000001000000055A7E7',
  subject: 'Quarterly review',
  bodyPreview: 'Agenda: numbers',
  isAllDay: false,
  isCancelled: false,
  isOrganizer: true,
  seriesMasterId: null,
  type: 'singleInstance',
  body: { contentType: 'text', content: 'Agenda: numbers' },
  start: { dateTime: '2030-01-10T09:00:00.0000000', timeZone: 'UTC' },
  end: { dateTime: '2030-01-10T10:00:00.0000000', timeZone: 'UTC' },
  location: { displayName: 'Room 4', locationType: 'default', uniqueId: 'Room 4', uniqueIdType: 'private' },
  attendees: [
    {
      type: 'required',
      emailAddress: { name: 'Bob', address: 'Bob@Example.com' },
      status: { response: 'tentativelyAccepted', time: '2030-01-02T10:00:00.0000000Z' },
    },
    {
      type: 'optional',
      emailAddress: { name: 'eve@example.com', address: 'eve@example.com' },
      status: { response: 'none', time: '0001-01-01T00:00:00Z' },
    },
    {
      type: 'required',
      emailAddress: { name: 'Dana', address: 'dana@contoso.example' },
      status: { response: 'organizer', time: '0001-01-01T00:00:00Z' },
    },
  ],
  organizer: { emailAddress: { name: 'Dana', address: 'dana@contoso.example' } },
};

const allDay: GraphEvent = {
  '@odata.etag': 'W/"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"',
  id: 'AAMkADallday',
  lastModifiedDateTime: '2030-01-02T09:30:00Z',
  subject: 'Offsite',
  isAllDay: true,
  start: { dateTime: '2030-05-01T00:00:00.0000000', timeZone: 'UTC' },
  end: { dateTime: '2030-05-03T00:00:00.0000000', timeZone: 'UTC' },
  body: { contentType: 'text', content: '' },
  location: { displayName: '' },
  attendees: [],
};

const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};

describe('outlook event mapper', () => {
  it('maps an event to a meeting with attendees, organizer, UTC times and per-field times', () => {
    const change = toMeetingChange(recorded, scope, new Date());
    const modified = new Date('2030-01-02T09:30:00.356Z');
    expect(change).toEqual({
      ...scope,
      entityType: 'meeting',
      op: 'upsert',
      externalId: recorded.id,
      eventKey: `${recorded.id}:DwAAABYAAABPXDmYCw0OS6ujjjrU6K2bAAAD2aYB`,
      providerVersion: recorded['@odata.etag'],
      eventTime: modified,
      fields: {
        title: 'Quarterly review',
        description: 'Agenda: numbers',
        location: 'Room 4',
        startAt: '2030-01-10T09:00:00.000Z',
        endAt: '2030-01-10T10:00:00.000Z',
        allDay: false,
        status: 'confirmed',
        organizer: 'dana@contoso.example',
        iCalUID: recorded.iCalUId,
        attendees: [
          { email: 'Bob@Example.com', name: 'Bob', responseStatus: 'tentative' },
          { email: 'eve@example.com', responseStatus: 'needsAction' },
          { email: 'dana@contoso.example', name: 'Dana', responseStatus: 'accepted', organizer: true },
        ],
      },
      fieldTimes: expect.objectContaining({ title: modified, attendees: modified }),
    });
    expect(Object.keys(change.fieldTimes ?? {}).sort()).toEqual(Object.keys(change.fields ?? {}).sort());
  });

  it('maps an all-day event to dates (end exclusive) and empty texts to null', () => {
    expect(toMeetingFields(allDay)).toMatchObject({
      startAt: '2030-05-01',
      endAt: '2030-05-03',
      allDay: true,
      description: null,
      location: null,
      organizer: null,
      iCalUID: null,
      attendees: [],
    });
  });

  it('maps a cancelled event to a tombstone with a key of its version', () => {
    const cancelled = { ...recorded, isCancelled: true };
    const change = toMeetingChange(cancelled, scope, new Date());
    expect(change).toMatchObject({ op: 'delete', fields: {}, providerVersion: recorded['@odata.etag'] });
    expect(change.eventKey).toBe(outlookEventKey(cancelled));
    expect(change.eventKey).not.toBe(outlookEventKey(recorded));
  });

  it('keys a removal by the delta round that reported it', () => {
    const round = roundOf('https://graph.microsoft.com/v1.0/me/calendarView/delta?$deltatoken=abc');
    const seenAt = new Date('2030-02-01T00:00:00Z');
    const removed = toRemovedChange('AAMkADgone', scope, seenAt, round);
    expect(removed).toMatchObject({ op: 'delete', externalId: 'AAMkADgone', eventTime: seenAt, fields: {} });
    // A redelivery of the same round: the same key; a later round's removal of the same id: another.
    expect(toRemovedChange('AAMkADgone', scope, new Date(), round).eventKey).toBe(removed.eventKey);
    const later = roundOf('https://graph.microsoft.com/v1.0/me/calendarView/delta?$deltatoken=abd');
    expect(toRemovedChange('AAMkADgone', scope, seenAt, later).eventKey).not.toBe(removed.eventKey);
  });

  it('goes back to an event body that Graph answers with the same fields', () => {
    const fields = toMeetingFields(recorded);
    const body = toGraphEvent({ ...fields });
    expect(body).toEqual({
      subject: 'Quarterly review',
      body: { contentType: 'text', content: 'Agenda: numbers' },
      location: { displayName: 'Room 4' },
      start: { dateTime: '2030-01-10T09:00:00.000', timeZone: 'UTC' },
      end: { dateTime: '2030-01-10T10:00:00.000', timeZone: 'UTC' },
      isAllDay: false,
      attendees: [
        {
          type: 'required',
          emailAddress: { address: 'Bob@Example.com', name: 'Bob' },
          status: { response: 'tentativelyAccepted' },
        },
        { type: 'required', emailAddress: { address: 'eve@example.com' }, status: { response: 'none' } },
        {
          type: 'required',
          emailAddress: { address: 'dana@contoso.example', name: 'Dana' },
          status: { response: 'accepted' },
        },
      ],
    });
    // Graph answers with what it computes beside what was written (etag, organizer, iCalUId).
    const answered: GraphEvent = {
      ...body,
      '@odata.etag': 'W/"x"',
      id: 'AAMkADnew',
      start: { dateTime: '2030-01-10T09:00:00.0000000', timeZone: 'UTC' },
      end: { dateTime: '2030-01-10T10:00:00.0000000', timeZone: 'UTC' },
      organizer: recorded.organizer,
      iCalUId: recorded.iCalUId,
    };
    expect(contentHash({ ...toMeetingFields(answered) })).toBe(contentHash({ ...fields }));
  });

  it('writes all-day dates as midnights with isAllDay, converts offsets to UTC, and clears with null', () => {
    expect(toGraphEvent({ startAt: '2030-05-01', endAt: '2030-05-02', location: null, title: null })).toEqual(
      {
        subject: null,
        location: { displayName: '' },
        start: { dateTime: '2030-05-01T00:00:00', timeZone: 'UTC' },
        end: { dateTime: '2030-05-02T00:00:00', timeZone: 'UTC' },
        isAllDay: true,
      },
    );
    expect(toGraphEvent({ startAt: '2030-05-01T09:00:00+02:00', allDay: false }).start).toEqual({
      dateTime: '2030-05-01T07:00:00.000',
      timeZone: 'UTC',
    });
    // Read-only and Outlook-less fields are not written.
    expect(toGraphEvent({ organizer: 'x@example.com', iCalUID: 'u', status: 'tentative' })).toEqual({});
  });

  it('reads Graph timestamps with seven fractional digits, with or without an offset', () => {
    expect(graphInstant('2030-01-02T09:30:00.3561234Z')?.toISOString()).toBe('2030-01-02T09:30:00.356Z');
    expect(graphInstant('2030-01-02T09:30:00.0000000')?.toISOString()).toBe('2030-01-02T09:30:00.000Z');
    expect(graphInstant('2030-01-02T09:30:00+01:00')?.toISOString()).toBe('2030-01-02T08:30:00.000Z');
    expect(graphInstant('not a time')).toBeUndefined();
    expect(graphInstant(null)).toBeUndefined();
  });

  it('derives a GUID-shaped transaction id from the idempotency key, the same every time', () => {
    const id = transactionIdFor('entity-1:target-2:heads-abc');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(transactionIdFor('entity-1:target-2:heads-abc')).toBe(id);
    expect(transactionIdFor('entity-1:target-2:heads-abd')).not.toBe(id);
  });

  it('tags writes with our origin and reads the tag back whatever the id spelling', () => {
    const [tag] = originTag('ent-1');
    expect(tag).toEqual({ id: ORIGIN_PROPERTY_ID, value: 'syncline:ent-1' });
    // Graph may answer with the type and property set spelt in another case; the name keeps its own.
    const spelt = `string {${tag!.id.split('{')[1]!.split('}')[0]!.toUpperCase()}} Name SynclineOrigin`;
    const read = { ...recorded, singleValueExtendedProperties: [{ id: spelt, value: tag!.value }] };
    expect(originOf(read)).toEqual({ synclineOrigin: 'syncline', synclineEntityId: 'ent-1' });
    const otherName = {
      ...recorded,
      singleValueExtendedProperties: [{ id: tag!.id.replace('Syncline', 'syncline'), value: tag!.value }],
    };
    expect(originOf(otherName)).toBeUndefined();
    expect(toMeetingChange(read, scope, new Date()).origin).toEqual(originOf(read));
    expect(originOf(recorded)).toBeUndefined();
  });

  it('uses only unified meeting field names', () => {
    for (const field of Object.keys(toMeetingFields(recorded)))
      expect(isUnifiedField('meeting', field), field).toBe(true);
  });
});
