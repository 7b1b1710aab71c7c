import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  fieldsOfProperty,
  type HubspotRecord,
  OBJECT_SPECS,
  specOfEntity,
  toHubspotContact,
  toHubspotDeal,
  toHubspotEmail,
  toHubspotMeeting,
  toHubspotTask,
  toUnifiedDeal,
  toUnifiedEmail,
  toUnifiedMeeting,
  toUnifiedPerson,
  toUnifiedTask,
} from './hubspot.mapper';

const record = (properties: Record<string, string>): HubspotRecord => ({
  id: '1',
  properties,
  createdAt: '2026-11-29T21:00:00.000Z',
  updatedAt: '2026-11-29T21:00:00.000Z',
});

// Recorded from the emulator (SDK-parsed dates) and trimmed.
const contact: HubspotRecord = {
  id: '151',
  properties: {
    createdate: '2026-11-29T21:00:00.000Z',
    email: 'ada@example.com',
    firstname: 'Ada',
    lastname: 'Lovelace',
    phone: null,
    hs_object_id: '151',
    lastmodifieddate: '2026-11-29T21:05:00.000Z',
    syncline_id: '0190f3a2-0000-7000-8000-000000000001',
  },
  createdAt: new Date('2026-11-29T21:00:00.000Z'),
  updatedAt: new Date('2026-11-29T21:05:00.000Z'),
  archived: false,
  propertiesWithHistory: {
    email: [{ value: 'ada@example.com', timestamp: '2026-11-29T21:00:00.000Z', sourceType: 'IMPORT' }],
    firstname: [
      { value: 'Ada', timestamp: '2026-11-29T21:05:00.000Z', sourceType: 'CRM_UI', sourceId: 'userId:7' },
      { value: 'A.', timestamp: '2026-11-29T21:00:00.000Z', sourceType: 'IMPORT' },
    ],
  },
};

describe('HubSpot mappers', () => {
  it('maps a contact to a person, with field times and origin from history', () => {
    const view = toUnifiedPerson(contact);
    expect(view.fields).toMatchObject({
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: null,
    });
    expect(view.fieldTimes.firstName).toEqual(new Date('2026-11-29T21:05:00.000Z'));
    expect(view.fieldTimes.email).toEqual(new Date('2026-11-29T21:00:00.000Z'));
    expect(view.origin).toEqual({ changeSource: 'CRM_UI', sourceId: 'userId:7' });
    expect(view.synclineId).toBe('0190f3a2-0000-7000-8000-000000000001');
  });

  it('maps a person to contact properties; null clears, absent is left alone', () => {
    expect(
      toHubspotContact({ email: 'ada@example.com', firstName: 'Ada', phone: null, unknown: 'x' }),
    ).toEqual({
      email: 'ada@example.com',
      firstname: 'Ada',
      phone: '',
    });
  });

  it('round-trips deals with numbers and dates, so receipts hash like later pulls', () => {
    const fields = {
      name: 'Big deal',
      amount: 1500.5,
      stage: 'closedwon',
      closeDate: '2026-12-01T00:00:00.000Z',
    };
    const properties = toHubspotDeal(fields);
    expect(properties).toEqual({
      dealname: 'Big deal',
      amount: '1500.5',
      dealstage: 'closedwon',
      closedate: '2026-12-01T00:00:00.000Z',
    });
    const back = toUnifiedDeal({ id: '9', properties, createdAt: new Date(), updatedAt: new Date() });
    expect(contentHash(back.fields)).toBe(contentHash(fields));
  });

  it('reads epoch-millisecond dates as ISO', () => {
    const view = toUnifiedMeeting({
      id: '3',
      properties: { hs_meeting_title: 'Kickoff', hs_meeting_start_time: '1795000000000' },
      createdAt: '2026-11-29T21:00:00.000Z',
      updatedAt: '2026-11-29T21:00:00.000Z',
    });
    expect(view.fields.startAt).toBe(new Date(1795000000000).toISOString());
    expect(toHubspotMeeting({ startAt: new Date(1795000000000) })).toEqual({
      hs_meeting_start_time: new Date(1795000000000).toISOString(),
    });
  });

  it('uses only unified field names', () => {
    for (const spec of OBJECT_SPECS)
      for (const field of Object.keys(spec.fields))
        expect(isUnifiedField(spec.entityType, field), `${spec.entityType}.${field}`).toBe(true);
  });

  it('maps meetings with startAt/endAt and a lower-case outcome, and round-trips them', () => {
    const fields = {
      title: 'Kickoff',
      startAt: '2026-12-01T10:00:00.000Z',
      endAt: '2026-12-01T11:00:00.000Z',
      outcome: 'no_show',
    };
    const properties = toHubspotMeeting(fields);
    expect(properties).toEqual({
      hs_meeting_title: 'Kickoff',
      hs_meeting_start_time: '2026-12-01T10:00:00.000Z',
      hs_meeting_end_time: '2026-12-01T11:00:00.000Z',
      hs_meeting_outcome: 'NO_SHOW',
    });
    expect(contentHash(toUnifiedMeeting(record(properties)).fields)).toBe(contentHash(fields));
    // A custom outcome passes through unchanged both ways.
    expect(toUnifiedMeeting(record({ hs_meeting_outcome: 'custom_1' })).fields.outcome).toBe('custom_1');
    expect(toHubspotMeeting({ outcome: 'custom_1' })).toEqual({ hs_meeting_outcome: 'custom_1' });
  });

  it.each([
    ['NOT_STARTED', 'open', null],
    ['IN_PROGRESS', 'open', 'in_progress'],
    ['WAITING', 'open', 'waiting'],
    ['DEFERRED', 'open', 'deferred'],
    ['COMPLETED', 'completed', null],
  ])('reads task status %s as %s (progress %s) and writes it back unchanged', (raw, status, progress) => {
    const view = toUnifiedTask(
      record({ hs_task_subject: 'Call', hs_task_status: raw, hs_timestamp: '1795000000000' }),
    );
    expect(view.fields).toMatchObject({
      title: 'Call',
      status,
      progress,
      dueAt: new Date(1795000000000).toISOString(),
    });
    const properties = toHubspotTask(view.fields);
    expect(properties.hs_task_status).toBe(raw);
    expect(contentHash(toUnifiedTask(record(properties)).fields)).toBe(contentHash(view.fields));
  });

  it('writes task status from status and progress, whichever are given', () => {
    expect(toHubspotTask({ status: 'open' })).toEqual({ hs_task_status: 'NOT_STARTED' });
    expect(toHubspotTask({ status: 'completed', progress: 'waiting' })).toEqual({
      hs_task_status: 'COMPLETED',
    });
    expect(toHubspotTask({ progress: 'waiting' })).toEqual({ hs_task_status: 'WAITING' });
    expect(toHubspotTask({ progress: null })).toEqual({});
    expect(toHubspotTask({ status: null })).toEqual({ hs_task_status: '' });
    expect(toHubspotTask({ priority: 'high', dueAt: '2026-12-01T10:00:00.000Z' })).toEqual({
      hs_task_priority: 'HIGH',
      hs_timestamp: '2026-12-01T10:00:00.000Z',
    });
    // What was written reads back with the same hash (write receipts).
    const fields = { title: 'Call', status: 'open', priority: 'low', dueAt: '2026-12-01T10:00:00.000Z' };
    expect(contentHash(toUnifiedTask(record(toHubspotTask(fields))).fields)).toBe(contentHash(fields));
  });

  it('maps email direction and status to the unified values, and back', () => {
    const cases = [
      ['EMAIL', 'outbound'],
      ['INCOMING_EMAIL', 'inbound'],
      ['FORWARDED_EMAIL', 'forwarded'],
    ] as const;
    for (const [raw, direction] of cases) {
      const view = toUnifiedEmail(
        record({ hs_email_subject: 'Hi', hs_email_direction: raw, hs_email_status: 'BOUNCED' }),
      );
      expect(view.fields).toMatchObject({ subject: 'Hi', direction, status: 'bounced' });
      expect(toHubspotEmail(view.fields)).toMatchObject({
        hs_email_direction: raw,
        hs_email_status: 'BOUNCED',
      });
    }
    const fields = { subject: 'Hi', text: 'Body', direction: 'inbound', sentAt: '2026-12-01T10:00:00.000Z' };
    expect(contentHash(toUnifiedEmail(record(toHubspotEmail(fields))).fields)).toBe(contentHash(fields));
  });

  it('names both task fields that read hs_task_status (property changes carry both)', () => {
    const spec = specOfEntity('task')!;
    expect(fieldsOfProperty(spec, 'hs_task_status')).toEqual([
      ['status', 'taskStatus'],
      ['progress', 'taskProgress'],
    ]);
    expect(fieldsOfProperty(spec, 'hs_task_subject')).toEqual([['title', 'string']]);
    expect(fieldsOfProperty(spec, 'nope')).toEqual([]);
  });
});
