import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import {
  parseAddressList,
  toEmailActivityChange,
  toEmailActivityFields,
  toEmailTombstone,
} from './gmail-message.mapper';

// messages.get?format=metadata as Gmail answers it.
const recorded = {
  id: '18c9f0a1b2c3d4e5',
  threadId: '18c9f0a1b2c3d4e5',
  labelIds: ['UNREAD', 'INBOX', 'CATEGORY_PERSONAL'],
  snippet: 'Quick question about the renewal',
  historyId: '98231',
  internalDate: '1893456000000',
  sizeEstimate: 4211,
  payload: {
    mimeType: 'multipart/alternative',
    headers: [
      { name: 'From', value: '"Lee, Ann" <Ann@Example.com>' },
      { name: 'To', value: 'dana@example.com, "Bob (sales)" <bob@example.com>' },
      { name: 'Cc', value: 'team: carol@example.com, dave@example.com;' },
      { name: 'Subject', value: 'Renewal' },
      { name: 'Date', value: 'Mon, 1 Jan 2030 09:00:00 +0100' },
      { name: 'Message-ID', value: '<CAF=abc123@mail.example.com>' },
    ],
  },
};
const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};

describe('gmail message mapper', () => {
  it('maps metadata to an email activity with participants, and never the snippet or body', () => {
    const change = toEmailActivityChange(recorded, scope, new Date());
    expect(change).toEqual({
      ...scope,
      entityType: 'email_activity',
      externalId: recorded.id,
      op: 'upsert',
      eventKey: '18c9f0a1b2c3d4e5:98231',
      eventTime: new Date(1893456000000),
      providerVersion: '98231',
      fields: {
        messageId: '<CAF=abc123@mail.example.com>',
        threadId: recorded.threadId,
        subject: 'Renewal',
        from: 'ann@example.com',
        fromName: 'Lee, Ann',
        to: ['dana@example.com', 'bob@example.com'],
        cc: ['carol@example.com', 'dave@example.com'],
        sentAt: '2030-01-01T08:00:00.000Z',
        occurredAt: new Date(1893456000000).toISOString(),
        labelIds: ['CATEGORY_PERSONAL', 'INBOX', 'UNREAD'],
        direction: 'inbound',
      },
      fieldTimes: expect.any(Object),
    });
    expect(JSON.stringify(change)).not.toContain('renewal"');
    expect(JSON.stringify(change)).not.toContain(recorded.snippet);
  });

  it('turns a deletion into a tombstone whose key is the same on redelivery', () => {
    const a = toEmailTombstone('m1', scope, new Date(1));
    const b = toEmailTombstone('m1', scope, new Date(2));
    expect(a).toMatchObject({ op: 'delete', fields: {}, externalId: 'm1' });
    expect(a.eventKey).toBe(b.eventKey);
  });

  it('parses address lists with quotes, comments and junk', () => {
    expect(parseAddressList('"Doe, Jane" <jane@x.com>, bob@y.com (Bob), not-an-address, <>')).toEqual([
      { email: 'jane@x.com', name: 'Doe, Jane' },
      { email: 'bob@y.com' },
    ]);
    expect(parseAddressList(undefined)).toEqual([]);
  });

  it('uses only unified email_activity field names', () => {
    const sent = toEmailActivityFields({ ...recorded, labelIds: ['SENT'] });
    for (const field of Object.keys(sent)) expect(isUnifiedField('email_activity', field), field).toBe(true);
    expect(sent.direction).toBe('outbound');
    expect(toEmailActivityFields(recorded).direction).toBe('inbound');
  });
});
