import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import {
  normaliseMessageId,
  type OutlookMessage,
  outlookEventKey,
  toEmailActivityChange,
  toEmailActivityFields,
  toEmailTombstone,
} from './outlook-message.mapper';

// A message delta item as Graph answers it with our $select and Prefer: IdType="ImmutableId".
const recorded: OutlookMessage = {
  '@odata.type': '#microsoft.graph.message',
  '@odata.etag': 'W/"CQAAABYAAADHcgC8Hl9tRZ/hc1wEUs1TAAAw/4pk"',
  id: 'AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0AtvBUm2Z1hUq8pOFTMnVN5QAAAK4i7gAA',
  changeKey: 'CQAAABYAAADHcgC8Hl9tRZ/hc1wEUs1TAAAw/4pk',
  lastModifiedDateTime: '2030-01-01T08:05:00Z',
  receivedDateTime: '2030-01-01T08:00:02Z',
  sentDateTime: '2030-01-01T08:00:00Z',
  internetMessageId: '<CAF=abc123@mail.example.com>',
  conversationId: 'AAQkADAwATM0MDAAMS1iZjcwLTJkNjktMDACLTAwCgAQAHRv2C5kV0Ooj6Zo2VRDXVM=',
  subject: 'Renewal',
  from: { emailAddress: { name: 'Lee, Ann', address: 'Ann@Example.com' } },
  toRecipients: [
    { emailAddress: { name: 'dana@contoso.example', address: 'Dana@Contoso.example' } },
    { emailAddress: { name: 'Bob (sales)', address: 'bob@example.com' } },
  ],
  ccRecipients: [{ emailAddress: { name: 'Carol', address: 'carol@example.com' } }],
  isDraft: false,
  isRead: false,
  flag: { flagStatus: 'notFlagged' },
  categories: ['Customers'],
  parentFolderId: 'AQMkADAwATM0MDAAMS1iZjcwLTJkNjktMDACLTAwCgAuAAAD',
};
const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};
const owner = 'dana@contoso.example';

describe('outlook message mapper', () => {
  it('maps a received message to an email activity with participants, as Gmail does', () => {
    const change = toEmailActivityChange(recorded, { place: 'inbox', owner }, scope, new Date());
    const received = new Date('2030-01-01T08:00:02Z');
    expect(change).toEqual({
      ...scope,
      entityType: 'email_activity',
      externalId: recorded.id,
      op: 'upsert',
      eventKey: `${recorded.id}:${recorded.changeKey}`,
      eventTime: received,
      providerVersion: recorded.changeKey,
      fields: {
        messageId: '<CAF=abc123@mail.example.com>',
        threadId: recorded.conversationId,
        subject: 'Renewal',
        from: 'ann@example.com',
        fromName: 'Lee, Ann',
        to: ['dana@contoso.example', 'bob@example.com'],
        cc: ['carol@example.com'],
        sentAt: '2030-01-01T08:00:00.000Z',
        occurredAt: '2030-01-01T08:00:02.000Z',
        labelIds: ['Customers', 'INBOX', 'UNREAD'],
        direction: 'inbound',
      },
      fieldTimes: Object.fromEntries(Object.keys(change.fields ?? {}).map((k) => [k, received])),
    });
  });

  it('uses only unified email_activity field names, in the order Gmail writes them', () => {
    const fields = toEmailActivityFields(recorded, { place: 'inbox', owner });
    for (const field of Object.keys(fields))
      expect(isUnifiedField('email_activity', field), field).toBe(true);
    expect(Object.keys(fields)).toEqual([
      'messageId',
      'threadId',
      'subject',
      'from',
      'fromName',
      'to',
      'cc',
      'sentAt',
      'occurredAt',
      'labelIds',
      'direction',
    ]);
  });

  it('reads sent mail as outbound: in Sent Items, or from the owner wherever it is', () => {
    const sent = { ...recorded, from: { emailAddress: { name: 'Dana', address: 'DANA@contoso.example' } } };
    expect(toEmailActivityFields(sent, { place: 'sentitems', owner })).toMatchObject({
      direction: 'outbound',
      labelIds: ['Customers', 'SENT', 'UNREAD'],
    });
    // Archived: no folder label, still the owner's own mail.
    expect(toEmailActivityFields({ ...sent, isRead: true }, { place: 'other', owner })).toMatchObject({
      direction: 'outbound',
      labelIds: ['Customers', 'SENT'],
    });
    // In Sent Items even when the owner's address is unknown.
    expect(toEmailActivityFields(recorded, { place: 'sentitems', owner: '' }).direction).toBe('outbound');
    expect(toEmailActivityFields(recorded, { place: 'other', owner }).direction).toBe('inbound');
  });

  it('marks read and flagged mail as Gmail labels them', () => {
    const marked = { ...recorded, isRead: true, flag: { flagStatus: 'flagged' }, categories: [] };
    expect(toEmailActivityFields(marked, { place: 'inbox', owner }).labelIds).toEqual(['INBOX', 'STARRED']);
  });

  it('maps a meeting request as the mail it is', () => {
    const request: OutlookMessage = {
      ...recorded,
      '@odata.type': '#microsoft.graph.eventMessage',
      subject: 'Quarterly review',
    };
    const fields = toEmailActivityFields(request, { place: 'inbox', owner });
    expect(fields).toMatchObject({
      subject: 'Quarterly review',
      from: 'ann@example.com',
      direction: 'inbound',
    });
    expect(Object.keys(fields)).toEqual(
      Object.keys(toEmailActivityFields(recorded, { place: 'inbox', owner })),
    );
  });

  it('gives no display name when Graph repeats the address as the name, and none for missing parts', () => {
    const bare: OutlookMessage = {
      id: 'x',
      from: { emailAddress: { name: 'ann@example.com', address: 'ann@example.com' } },
      toRecipients: [{ emailAddress: { name: 'no address' } }],
    };
    expect(toEmailActivityFields(bare, { place: 'inbox', owner })).toMatchObject({
      messageId: null,
      threadId: null,
      subject: null,
      from: 'ann@example.com',
      fromName: null,
      to: [],
      cc: [],
      sentAt: null,
      occurredAt: null,
    });
  });

  it("keeps Gmail's Message-ID form: angle brackets, no spaces, case kept", () => {
    expect(normaliseMessageId('<CAF=abc@mail.example.com>')).toBe('<CAF=abc@mail.example.com>');
    expect(normaliseMessageId('  CAF=abc@mail.example.com ')).toBe('<CAF=abc@mail.example.com>');
    expect(normaliseMessageId('<CAF=abc@mail.example.com')).toBe('<CAF=abc@mail.example.com>');
    expect(normaliseMessageId('')).toBeNull();
    expect(normaliseMessageId(null)).toBeNull();
  });

  it('keys a version by its changeKey, or the one in its etag', () => {
    const { changeKey: _, ...withoutKey } = recorded;
    expect(outlookEventKey(withoutKey)).toBe(outlookEventKey(recorded));
    expect(outlookEventKey({ ...recorded, changeKey: 'other' })).not.toBe(outlookEventKey(recorded));
  });

  it('turns a deletion into a tombstone whose key is the same on redelivery, and a move to Deleted Items into one per version', () => {
    const a = toEmailTombstone('m1', scope, new Date(1));
    const b = toEmailTombstone('m1', scope, new Date(2));
    expect(a).toMatchObject({ op: 'delete', fields: {}, externalId: 'm1', entityType: 'email_activity' });
    expect(a.eventKey).toBe(b.eventKey);
    const trashed = toEmailTombstone('m1', scope, new Date(3), recorded);
    expect(trashed.eventKey).not.toBe(a.eventKey);
    expect(trashed.eventTime).toEqual(new Date('2030-01-01T08:05:00Z'));
    expect(toEmailTombstone('m1', scope, new Date(4), recorded).eventKey).toBe(trashed.eventKey);
    expect(toEmailTombstone('m1', scope, new Date(4), { ...recorded, changeKey: 'later' }).eventKey).not.toBe(
      trashed.eventKey,
    );
  });

  it('never carries a body', () => {
    const withBody = { ...recorded, body: { contentType: 'text', content: 'secret body' } } as OutlookMessage;
    expect(
      JSON.stringify(toEmailActivityChange(withBody, { place: 'inbox', owner }, scope, new Date())),
    ).not.toContain('secret body');
  });
});
