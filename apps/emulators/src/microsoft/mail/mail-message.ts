import { z } from 'zod';
import type { DeltaJournal } from '../delta';
import { graphErrors } from '../graph-errors';
import type { MicrosoftUser } from '../user.store';

/** The folders every mailbox has, by Graph's well-known name (accepted wherever a folder id is). */
export const WELL_KNOWN_FOLDERS = {
  inbox: 'Inbox',
  sentitems: 'Sent Items',
  drafts: 'Drafts',
  deleteditems: 'Deleted Items',
  archive: 'Archive',
} as const;
export type WellKnownFolder = keyof typeof WELL_KNOWN_FOLDERS;

export interface MailFolder {
  id: string;
  wellKnownName: WellKnownFolder;
  displayName: string;
  /** The folder's change journal: message delta rounds read it. Entries are keyed by REST id. */
  journal: DeltaJournal<Placement>;
}

export interface Recipient {
  emailAddress: { name: string; address: string };
}

export const MEETING_MESSAGE_TYPES = [
  'meetingRequest',
  'meetingCancelled',
  'meetingAccepted',
  'meetingTenativelyAccepted',
  'meetingDeclined',
] as const;

/** What makes a message a meeting message (Graph's eventMessage). */
export interface MeetingMessage {
  type: (typeof MEETING_MESSAGE_TYPES)[number];
  start: number;
  end: number;
  isAllDay: boolean;
  location: string;
}

export const IMPORTANCE = ['low', 'normal', 'high'] as const;
export const FLAG_STATUS = ['notFlagged', 'complete', 'flagged'] as const;
export const CLASSIFICATION = ['focused', 'other'] as const;

/** What a message says and how its owner has marked it. */
export interface MessageFields {
  subject: string;
  body: { contentType: 'text' | 'html'; content: string };
  from: Recipient;
  toRecipients: Recipient[];
  ccRecipients: Recipient[];
  bccRecipients: Recipient[];
  sentAt: number | null;
  receivedAt: number;
  internetMessageId: string;
  conversationId: string;
  /** base64, as Graph writes it. */
  conversationIndex: string;
  isDraft: boolean;
  isRead: boolean;
  importance: (typeof IMPORTANCE)[number];
  categories: string[];
  hasAttachments: boolean;
  flag: (typeof FLAG_STATUS)[number];
  inferenceClassification: (typeof CLASSIFICATION)[number];
  meeting: MeetingMessage | null;
}

export interface StoredMessage {
  immutableId: string;
  created: number;
  version: { changeKey: string; modified: number };
  fields: MessageFields;
  /** Where the message is now. */
  placement: Placement;
}

/** A message in one folder, under the REST id it has there (a move makes a new placement). */
export interface Placement {
  message: StoredMessage;
  folderId: string;
  restId: string;
  /** The folder journal's position when the message arrived in it (changeType=created). */
  placedAt: number;
}

const instant = z.iso.datetime({ offset: true }).transform((s) => Date.parse(s));

/** `"Ada <ada@example.com>"`, `"ada@example.com"` or `{ name?, address }`. */
const address = z.union([
  z.string().transform((s, ctx) => {
    const m = /^\s*(?:"?([^"<]*?)"?\s*<([^<>\s]+@[^<>\s]+)>|([^<>\s]+@[^<>\s]+))\s*$/.exec(s);
    const addr = m?.[2] ?? m?.[3];
    if (!addr) {
      ctx.addIssue({ code: 'custom', message: `not an address: ${s}` });
      return z.NEVER;
    }
    return { name: m?.[1]?.trim() || addr, address: addr };
  }),
  z.strictObject({ name: z.string().optional(), address: z.email() }).transform((a) => ({
    name: a.name ?? a.address,
    address: a.address,
  })),
]);
const addresses = z.union([address.transform((a) => [a]), z.array(address)]).default([]);

/**
 * A mail as a person in Outlook makes it happen: received into the inbox (the default), sent
 * (folder `sentitems`: it comes from the mailbox's owner) or saved as a draft. A
 * `meetingRequest` makes it a meeting message (eventMessage).
 */
export const uiMessageBody = z.strictObject({
  folder: z.string().min(1).default('inbox'),
  from: address.optional(),
  to: addresses,
  cc: addresses,
  bcc: addresses,
  subject: z.string().default(''),
  body: z
    .union([
      z.string().transform((content) => ({ contentType: 'text' as const, content })),
      z.strictObject({ contentType: z.enum(['text', 'html']), content: z.string() }),
    ])
    .default({ contentType: 'text', content: '' }),
  sentAt: instant.optional(),
  receivedAt: instant.optional(),
  internetMessageId: z
    .string()
    .regex(/^<[^<>@\s]+@[^<>@\s]+>$/, 'a Message-ID in angle brackets')
    .optional(),
  conversationId: z.string().min(1).optional(),
  isRead: z.boolean().optional(),
  importance: z.enum(IMPORTANCE).default('normal'),
  categories: z.array(z.string()).default([]),
  hasAttachments: z.boolean().default(false),
  meetingRequest: z
    .strictObject({
      type: z.enum(MEETING_MESSAGE_TYPES).default('meetingRequest'),
      start: instant,
      end: instant,
      isAllDay: z.boolean().default(false),
      location: z.string().default(''),
    })
    .optional(),
});
export type UiMessage = z.output<typeof uiMessageBody>;

/** Who sent it and who got it, as the folder implies: the owner sends what is in Sent Items and Drafts. */
export function addressing(
  input: UiMessage,
  folder: WellKnownFolder | undefined,
  owner: MicrosoftUser,
): { from: Recipient; to: Recipient[] } {
  const me = { name: owner.displayName, address: owner.mail };
  const outgoing = folder === 'sentitems' || folder === 'drafts';
  const from = input.from ?? (outgoing ? me : undefined);
  if (!from) throw graphErrors.badRequest(`A mail received into ${folder ?? 'a folder'} needs a from.`);
  const to = input.to.length > 0 || outgoing ? input.to : [me];
  return { from: { emailAddress: from }, to: to.map((emailAddress) => ({ emailAddress })) };
}

export const recipients = (list: { name: string; address: string }[]): Recipient[] =>
  list.map((emailAddress) => ({ emailAddress }));

/** What an owner may change on a received or sent message (PATCH /me/messages/{id}, or Outlook). */
export type MessageChanges = Partial<
  Pick<MessageFields, 'isRead' | 'categories' | 'importance' | 'flag' | 'inferenceClassification'>
>;

/** Properties Graph computes or that are fixed once a mail is sent: echoing them back is not a change. */
const FIXED = new Set(['id', 'changeKey', 'createdDateTime', 'lastModifiedDateTime', 'parentFolderId']);

/** A PATCH body as changes; anything else a sent or received message does not allow is refused. */
export function parseMessageChanges(body: unknown): MessageChanges {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw graphErrors.badRequest('The request body must be a JSON object.');
  const out: MessageChanges = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (key.includes('@') || FIXED.has(key)) continue;
    switch (key) {
      case 'isRead':
        if (typeof value !== 'boolean') throw invalid(key, 'true or false');
        out.isRead = value;
        break;
      case 'categories':
        if (!Array.isArray(value) || !value.every((c) => typeof c === 'string'))
          throw invalid(key, 'an array of strings');
        out.categories = value;
        break;
      case 'importance':
        out.importance = oneOf(key, value, IMPORTANCE);
        break;
      case 'inferenceClassification':
        out.inferenceClassification = oneOf(key, value, CLASSIFICATION);
        break;
      case 'flag': {
        const status =
          typeof value === 'object' && value !== null
            ? (value as { flagStatus?: unknown }).flagStatus
            : undefined;
        out.flag = oneOf('flag.flagStatus', status, FLAG_STATUS);
        break;
      }
      default:
        throw graphErrors.badRequest(
          `The emulator updates isRead, categories, importance, flag and inferenceClassification of a message, not '${key}'.`,
        );
    }
  }
  return out;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  const found = allowed.find((a) => typeof value === 'string' && a.toLowerCase() === value.toLowerCase());
  if (!found) throw invalid(name, `one of ${allowed.join(', ')}`);
  return found;
}

const invalid = (name: string, what: string) =>
  graphErrors.badRequest(`Invalid value for property '${name}': ${what} is expected.`);
