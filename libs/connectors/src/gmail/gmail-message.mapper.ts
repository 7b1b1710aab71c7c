import type { SourceChangeInput } from '@syncline/core';
import type { gmail_v1 } from 'googleapis/build/src/apis/gmail';
import type { ChangeScope, EmailActivityFields } from '../shared/unified-records';

export type { ChangeScope, EmailActivityFields };

type GmailMessage = gmail_v1.Schema$Message;

/** The headers we ask for (format=metadata): participants and identity, never bodies. */
export const METADATA_HEADERS = ['From', 'To', 'Cc', 'Subject', 'Date', 'Message-ID'] as const;

export interface Mailbox {
  email: string;
  name?: string;
}

/**
 * An RFC 5322 address list (`"Doe, Jane" <jane@x.com>, bob@y.com`) → mailboxes. Commas inside
 * quotes, angle brackets or comments do not split; groups (`team: a@x, b@y;`) are flattened.
 */
export function parseAddressList(value: string | null | undefined): Mailbox[] {
  if (!value) return [];
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let angle = 0;
  let comment = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === '\\' && quoted) {
      current += ch + (value[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '"' && comment === 0) quoted = !quoted;
    else if (!quoted && ch === '(') comment++;
    else if (!quoted && ch === ')' && comment > 0) comment--;
    else if (!quoted && comment === 0 && ch === '<') angle++;
    else if (!quoted && comment === 0 && ch === '>' && angle > 0) angle--;
    if (!quoted && angle === 0 && comment === 0 && (ch === ',' || ch === ';')) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  const out: Mailbox[] = [];
  for (let part of parts) {
    part = part.trim();
    part = part.replace(/^[^:@"<]*:\s*/, ''); // a group's display name (`team: a@x, b@y;`)
    const angled = /<([^<>]*)>/.exec(part);
    const email = (angled ? angled[1]! : part.replace(/\([^)]*\)/g, '')).trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) continue;
    const rawName = angled ? part.slice(0, angled.index).trim() : '';
    const name = rawName
      .replace(/^"(.*)"$/, '$1')
      .replace(/\\(.)/g, '$1')
      .trim();
    out.push(name ? { email, name } : { email });
  }
  return out;
}

const headerOf = (message: GmailMessage, name: string): string | null => {
  const wanted = name.toLowerCase();
  const found = message.payload?.headers?.find((h) => h.name?.toLowerCase() === wanted);
  return found?.value ?? null;
};

const isoOrNull = (value: string | null): string | null => {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
};

export function toEmailActivityFields(message: GmailMessage): EmailActivityFields {
  const from = parseAddressList(headerOf(message, 'From'))[0];
  const labelIds = [...(message.labelIds ?? [])].sort();
  return {
    messageId: headerOf(message, 'Message-ID'),
    threadId: message.threadId ?? null,
    subject: headerOf(message, 'Subject'),
    from: from?.email ?? null,
    fromName: from?.name ?? null,
    to: parseAddressList(headerOf(message, 'To')).map((m) => m.email),
    cc: parseAddressList(headerOf(message, 'Cc')).map((m) => m.email),
    sentAt: isoOrNull(headerOf(message, 'Date')),
    occurredAt: message.internalDate ? new Date(Number(message.internalDate)).toISOString() : null,
    labelIds,
    direction: labelIds.includes('SENT') ? 'outbound' : 'inbound',
  };
}

/** Same message state → same key (the message's historyId moves only when it changes). */
export const gmailEventKey = (message: Pick<GmailMessage, 'id' | 'historyId'>): string =>
  `${message.id}:${message.historyId ?? '0'}`;

export function toEmailActivityChange(
  message: GmailMessage,
  scope: ChangeScope,
  receivedAt: Date,
): SourceChangeInput {
  if (!message.id) throw new Error('gmail message without an id');
  const fields = toEmailActivityFields(message);
  const eventTime = message.internalDate ? new Date(Number(message.internalDate)) : receivedAt;
  return {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'email_activity',
    externalId: message.id,
    op: 'upsert',
    eventKey: gmailEventKey(message),
    eventTime,
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
    ...(message.historyId ? { providerVersion: message.historyId } : {}),
  };
}

/** A `messageDeleted` history record → a tombstone; Gmail gives no time, so we use when we saw it. */
export function toEmailTombstone(messageId: string, scope: ChangeScope, receivedAt: Date): SourceChangeInput {
  return {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'email_activity',
    externalId: messageId,
    op: 'delete',
    eventKey: `${messageId}:deleted`,
    eventTime: receivedAt,
    fields: {},
  };
}
