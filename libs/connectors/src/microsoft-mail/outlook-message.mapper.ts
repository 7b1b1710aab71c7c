import type { SourceChangeInput } from '@syncline/core';
import type { ChangeScope, EmailActivityFields } from '../shared/unified-records';

/**
 * Outlook's mail in the unified email_activity fields (EmailActivityFields, as Gmail reports
 * them): `threadId` is Graph's conversationId; `sentAt` the sentDateTime and `occurredAt` the
 * receivedDateTime (the event time); `labelIds` Gmail's system labels for what Outlook shows
 * (see outlookLabels); `direction` outbound when labelled SENT, as Gmail decides.
 */
export type { ChangeScope, EmailActivityFields };

/** A recipient as Graph writes it. */
export interface GraphRecipient {
  emailAddress?: { name?: string | null; address?: string | null } | null;
}

/**
 * A message (or meeting message, `#microsoft.graph.eventMessage`) as message delta and
 * `GET /me/messages/{id}` return it with the properties of MESSAGE_SELECT; a delta entry for a
 * message that left the folder is only `{ id, '@removed' }`.
 */
export interface OutlookMessage {
  '@odata.type'?: string;
  '@odata.etag'?: string;
  '@removed'?: { reason?: string } | null;
  id: string;
  changeKey?: string | null;
  lastModifiedDateTime?: string | null;
  receivedDateTime?: string | null;
  sentDateTime?: string | null;
  internetMessageId?: string | null;
  conversationId?: string | null;
  subject?: string | null;
  from?: GraphRecipient | null;
  toRecipients?: GraphRecipient[] | null;
  ccRecipients?: GraphRecipient[] | null;
  isDraft?: boolean | null;
  isRead?: boolean | null;
  flag?: { flagStatus?: string | null } | null;
  categories?: string[] | null;
  parentFolderId?: string | null;
}

/** The properties we read (`$select`): participants, identity and marks, never bodies. */
export const MESSAGE_SELECT = [
  'changeKey',
  'lastModifiedDateTime',
  'receivedDateTime',
  'sentDateTime',
  'internetMessageId',
  'conversationId',
  'subject',
  'from',
  'toRecipients',
  'ccRecipients',
  'isDraft',
  'isRead',
  'flag',
  'categories',
  'parentFolderId',
] as const;

/** Meeting messages (requests, cancellations, responses) are this subtype of message. */
export const EVENT_MESSAGE_TYPE = '#microsoft.graph.eventMessage';

/** Where a message is, as far as its fields go: the two folders we follow, or elsewhere (Archive, …). */
export type MailPlace = 'inbox' | 'sentitems' | 'other';

/** What the mapping needs besides the message. */
export interface MailboxView {
  /** The folder the message is in. */
  place: MailPlace;
  /** The mailbox owner's address, lower case: mail from it is outbound. */
  owner: string;
}

/**
 * An RFC 5322 Message-ID as Gmail reports it (the header, angle brackets included). Graph's
 * internetMessageId is that header; surrounding spaces go and missing brackets are added, so
 * the two compare equal. Case is kept: the part before the `@` is case-sensitive.
 */
export function normaliseMessageId(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  if (!trimmed) return null;
  return /^<.*>$/.test(trimmed) ? trimmed : `<${trimmed.replace(/^<|>$/g, '')}>`;
}

const addressOf = (r: GraphRecipient | null | undefined): string | null => {
  const address = r?.emailAddress?.address?.trim().toLowerCase();
  return address ? address : null;
};

/** Graph repeats the address as the name when a mail names none; Gmail has no name then. */
const nameOf = (r: GraphRecipient | null | undefined): string | null => {
  const name = r?.emailAddress?.name?.trim();
  if (!name || name.toLowerCase() === addressOf(r)) return null;
  return name;
};

const addresses = (list: readonly GraphRecipient[] | null | undefined): string[] =>
  (list ?? []).flatMap((r) => {
    const a = addressOf(r);
    return a ? [a] : [];
  });

const isoOrNull = (value: string | null | undefined): string | null => {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
};

/**
 * What Outlook shows of a message, in Gmail's label ids:
 *
 * | Outlook                                   | label     |
 * |-------------------------------------------|-----------|
 * | in Inbox                                  | INBOX     |
 * | in Sent Items, or from the mailbox owner  | SENT      |
 * | not read                                  | UNREAD    |
 * | flagged (flagStatus `flagged`)            | STARRED   |
 * | each category                             | its name  |
 *
 * Elsewhere (Archive, a folder of the user's) is no label, as an archived Gmail message has no
 * INBOX. Drafts and Deleted Items are never reported as mail (skipped, tombstoned).
 */
export function outlookLabels(message: OutlookMessage, view: MailboxView): string[] {
  const labels = new Set<string>(message.categories ?? []);
  if (view.place === 'inbox') labels.add('INBOX');
  if (view.place === 'sentitems' || (view.owner !== '' && addressOf(message.from) === view.owner))
    labels.add('SENT');
  if (message.isRead === false) labels.add('UNREAD');
  if (message.flag?.flagStatus === 'flagged') labels.add('STARRED');
  return [...labels].sort();
}

/**
 * A meeting message (eventMessage) maps as the mail it is: the invitation, cancellation or
 * answer someone sent, with its subject and participants. The meeting itself is the calendar
 * connector's record; nothing here says more of it.
 */
export function toEmailActivityFields(message: OutlookMessage, view: MailboxView): EmailActivityFields {
  const labelIds = outlookLabels(message, view);
  return {
    messageId: normaliseMessageId(message.internetMessageId),
    threadId: message.conversationId ?? null,
    subject: message.subject ?? null,
    from: addressOf(message.from),
    fromName: nameOf(message.from),
    to: addresses(message.toRecipients),
    cc: addresses(message.ccRecipients),
    sentAt: isoOrNull(message.sentDateTime),
    occurredAt: isoOrNull(message.receivedDateTime),
    labelIds,
    direction: labelIds.includes('SENT') ? 'outbound' : 'inbound',
  };
}

/** The message's version: its changeKey, else the one its `@odata.etag` (`W/"<changeKey>"`) carries. */
export function versionOf(message: OutlookMessage): string | undefined {
  if (message.changeKey) return message.changeKey;
  const etag = /^(?:W\/)?"(.*)"$/.exec(message['@odata.etag'] ?? '')?.[1];
  return etag || undefined;
}

/** Same message version → same key (every change, a move included, gives a new changeKey). */
export const outlookEventKey = (message: OutlookMessage): string =>
  `${message.id}:${versionOf(message) ?? '0'}`;

export function toEmailActivityChange(
  message: OutlookMessage,
  view: MailboxView,
  scope: ChangeScope,
  receivedAt: Date,
): SourceChangeInput {
  const fields = toEmailActivityFields(message, view);
  const eventTime = fields.occurredAt ? new Date(fields.occurredAt) : receivedAt;
  const version = versionOf(message);
  return {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'email_activity',
    externalId: message.id,
    op: 'upsert',
    eventKey: outlookEventKey(message),
    eventTime,
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
    ...(version ? { providerVersion: version } : {}),
  };
}

/**
 * A message gone from the mail we follow → a tombstone. Deleted for good (Graph no longer has
 * it): keyed on the id alone, timed when we saw it, as Gmail's. Moved to Deleted Items (Outlook's
 * delete): keyed on the version the move made and timed by it, so a message deleted, restored
 * and deleted again gives two tombstones.
 */
export function toEmailTombstone(
  id: string,
  scope: ChangeScope,
  receivedAt: Date,
  trashed?: OutlookMessage,
): SourceChangeInput {
  const version = trashed ? versionOf(trashed) : undefined;
  const movedAt = isoOrNull(trashed?.lastModifiedDateTime);
  return {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'email_activity',
    externalId: id,
    op: 'delete',
    eventKey: version ? `${id}:deleted:${version}` : `${id}:deleted`,
    eventTime: movedAt ? new Date(movedAt) : receivedAt,
    fields: {},
  };
}
