import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  type HubspotRecord,
  toHubspotContact,
  toHubspotDeal,
  toHubspotMeeting,
  toUnifiedDeal,
  toUnifiedMeeting,
  toUnifiedPerson,
} from './hubspot.mapper';

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
    expect(view.fields.startTime).toBe(new Date(1795000000000).toISOString());
    expect(toHubspotMeeting({ startTime: new Date(1795000000000) })).toEqual({
      hs_meeting_start_time: new Date(1795000000000).toISOString(),
    });
  });
});
