import { compileGmailQuery } from './gmail-query';
import { googleErrors } from './google-errors';
import type { SeededRandom } from './google-ids';

export const HISTORY_TYPES = ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'] as const;
export type HistoryType = (typeof HISTORY_TYPES)[number];
export const MESSAGE_FORMATS = ['minimal', 'metadata', 'full', 'raw'] as const;
export type MessageFormat = (typeof MESSAGE_FORMATS)[number];

/** Mail arriving in, or sent from, the mailbox (control API). */
export interface IncomingMail {
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  /** RFC 3339 or RFC 2822; absent = now. */
  date?: string;
  messageId?: string;
  text: string;
  labelIds?: string[];
  inReplyTo?: string;
}

export interface MessageHeader {
  name: string;
  value: string;
}

interface StoredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  headers: MessageHeader[];
  text: string;
  internalDate: number;
  historyId: number;
  deleted: boolean;
}

interface MessageRef {
  id: string;
  threadId: string;
  labelIds: string[];
}

interface HistoryRecord {
  id: number;
  type: HistoryType;
  message: MessageRef;
  /** The labels a labelAdded / labelRemoved record is about. */
  changedLabelIds?: string[];
}

export interface GmailMessageResource {
  id: string;
  threadId: string;
  labelIds: string[];
  snippet: string;
  sizeEstimate: number;
  historyId: string;
  internalDate: string;
  payload?: {
    partId: string;
    mimeType: string;
    filename: string;
    headers: MessageHeader[];
    body?: { size: number; data?: string };
  };
  raw?: string;
}

export interface HistoryQuery {
  startHistoryId: number;
  historyTypes: HistoryType[];
  labelId?: string;
  maxResults: number;
}

interface HistoryListing extends HistoryQuery {
  afterId: number;
}

interface MessageListing {
  ids: string[];
  offset: number;
  maxResults: number;
}

export interface GmailStoreDeps {
  rng: SeededRandom;
  now: () => number;
  /** Called after every history record, with the labels it touched (for watch label filters). */
  onChange: (labelIds: string[]) => void;
}

/**
 * One mailbox: messages plus the history log that history.list pages through. History ids
 * grow with random gaps; records at or below `floor` are forgotten, and asking for them is
 * a 404 that tells the client to do a full sync.
 */
export class GmailStore {
  private currentHistoryId: number;
  private floor: number;
  private readonly messages = new Map<string, StoredMessage>();
  private history: HistoryRecord[] = [];
  private readonly historyPages = new Map<string, HistoryListing>();
  private readonly messagePages = new Map<string, MessageListing>();

  constructor(
    readonly email: string,
    private readonly deps: GmailStoreDeps,
  ) {
    this.currentHistoryId = deps.rng.between(1_000_000, 9_000_000);
    this.floor = this.currentHistoryId;
  }

  get historyId(): number {
    return this.currentHistoryId;
  }

  deliver(mail: IncomingMail): GmailMessageResource {
    const internalDate = parseMailDate(mail.date) ?? this.deps.now();
    const id = `1${this.deps.rng.hex(15)}`;
    const messageIdHeader = bracket(mail.messageId ?? `<${this.deps.rng.base64url(24)}@mail.example.com>`);
    const parent = mail.inReplyTo ? this.findByMessageId(bracket(mail.inReplyTo)) : undefined;
    const sent = mail.from.toLowerCase().includes(this.email);
    const headers: MessageHeader[] = [
      { name: 'MIME-Version', value: '1.0' },
      { name: 'Date', value: rfc2822(internalDate) },
      { name: 'Message-ID', value: messageIdHeader },
      ...(mail.inReplyTo ? [{ name: 'In-Reply-To', value: bracket(mail.inReplyTo) }] : []),
      { name: 'Subject', value: mail.subject },
      { name: 'From', value: mail.from },
      { name: 'To', value: mail.to.join(', ') },
      ...(mail.cc.length > 0 ? [{ name: 'Cc', value: mail.cc.join(', ') }] : []),
      { name: 'Content-Type', value: 'text/plain; charset="UTF-8"' },
    ];
    const message: StoredMessage = {
      id,
      threadId: parent?.threadId ?? id,
      labelIds: mail.labelIds ?? (sent ? ['SENT'] : ['INBOX', 'UNREAD']),
      headers,
      text: mail.text,
      internalDate,
      historyId: 0,
      deleted: false,
    };
    this.messages.set(id, message);
    this.append('messageAdded', message);
    return this.present(message, 'metadata', []);
  }

  remove(id: string): void {
    const message = this.requireMessage(id);
    message.deleted = true;
    this.append('messageDeleted', message);
  }

  modifyLabels(id: string, add: string[], remove: string[]): GmailMessageResource {
    const message = this.requireMessage(id);
    const added = add.filter((l) => !message.labelIds.includes(l));
    const removed = remove.filter((l) => message.labelIds.includes(l));
    message.labelIds = [...message.labelIds.filter((l) => !removed.includes(l)), ...added];
    if (added.length > 0) this.append('labelAdded', message, added);
    if (removed.length > 0) this.append('labelRemoved', message, removed);
    return this.present(message, 'metadata', []);
  }

  profile(): { emailAddress: string; messagesTotal: number; threadsTotal: number; historyId: string } {
    const live = this.live();
    return {
      emailAddress: this.email,
      messagesTotal: live.length,
      threadsTotal: new Set(live.map((m) => m.threadId)).size,
      historyId: String(this.currentHistoryId),
    };
  }

  listMessages(opts: {
    labelIds: string[];
    q?: string;
    includeSpamTrash: boolean;
    maxResults: number;
    pageToken?: string;
  }): { messages?: { id: string; threadId: string }[]; nextPageToken?: string; resultSizeEstimate: number } {
    let listing: MessageListing;
    if (opts.pageToken !== undefined) {
      const saved = this.messagePages.get(opts.pageToken);
      if (!saved) throw googleErrors.invalid('Invalid pageToken', 'pageToken');
      listing = saved;
    } else {
      const matches = opts.q === undefined ? () => true : compileGmailQuery(opts.q, this.deps.now());
      const ids = this.live()
        .filter((m) => opts.includeSpamTrash || !m.labelIds.some((l) => l === 'SPAM' || l === 'TRASH'))
        .filter((m) => opts.labelIds.every((l) => m.labelIds.includes(l)))
        .filter((m) => matches(this.searchable(m)))
        .sort((a, b) => b.internalDate - a.internalDate || (b.id < a.id ? -1 : 1))
        .map((m) => m.id);
      listing = { ids, offset: 0, maxResults: opts.maxResults };
    }
    const page = listing.ids.slice(listing.offset, listing.offset + listing.maxResults);
    const messages = page.flatMap((id) => {
      const m = this.messages.get(id);
      return m ? [{ id: m.id, threadId: m.threadId }] : [];
    });
    const offset = listing.offset + page.length;
    const out: {
      messages?: { id: string; threadId: string }[];
      nextPageToken?: string;
      resultSizeEstimate: number;
    } = {
      resultSizeEstimate: listing.ids.length,
    };
    if (messages.length > 0) out.messages = messages;
    if (offset < listing.ids.length) {
      const token = this.deps.rng.digits(20);
      this.messagePages.set(token, { ...listing, offset });
      out.nextPageToken = token;
    }
    return out;
  }

  getMessage(id: string, format: MessageFormat, metadataHeaders: string[]): GmailMessageResource {
    const message = this.messages.get(id);
    if (!message || message.deleted) throw googleErrors.historyNotFound();
    return this.present(message, format, metadataHeaders);
  }

  listHistory(
    query: HistoryQuery,
    pageToken: string | undefined,
  ): { history?: ReturnType<GmailStore['presentHistory']>[]; historyId: string; nextPageToken?: string } {
    let listing: HistoryListing;
    if (pageToken !== undefined) {
      const saved = this.historyPages.get(pageToken);
      if (!saved) throw googleErrors.invalid('Invalid pageToken', 'pageToken');
      listing = saved;
    } else {
      listing = { ...query, afterId: query.startHistoryId };
    }
    if (listing.startHistoryId < this.floor) throw googleErrors.historyNotFound();
    const matching = this.history.filter(
      (r) =>
        r.id > listing.afterId &&
        (listing.historyTypes.length === 0 || listing.historyTypes.includes(r.type)) &&
        (listing.labelId === undefined || r.message.labelIds.includes(listing.labelId)),
    );
    const page = matching.slice(0, listing.maxResults);
    const out: {
      history?: ReturnType<GmailStore['presentHistory']>[];
      historyId: string;
      nextPageToken?: string;
    } = {
      historyId: String(this.currentHistoryId),
    };
    if (page.length > 0) out.history = page.map((r) => this.presentHistory(r));
    const last = page.at(-1);
    if (matching.length > page.length && last) {
      const token = this.deps.rng.digits(20);
      this.historyPages.set(token, { ...listing, afterId: last.id });
      out.nextPageToken = token;
    }
    return out;
  }

  /**
   * Forgets all history so far (the invalidate-cursors fault): every earlier startHistoryId
   * is now too old. The history id moves on, as Gmail's does for changes nobody sees.
   */
  invalidateHistory(): void {
    this.currentHistoryId += this.deps.rng.between(2, 50);
    this.floor = this.currentHistoryId;
    this.history = [];
    this.historyPages.clear();
  }

  /** Current messages as the control API shows them. */
  snapshot(): (GmailMessageResource & { text: string; deleted: boolean })[] {
    return [...this.messages.values()].map((m) => ({
      ...this.present(m, 'metadata', []),
      text: m.text,
      deleted: m.deleted,
    }));
  }

  private append(type: HistoryType, message: StoredMessage, changedLabelIds?: string[]): void {
    this.currentHistoryId += this.deps.rng.between(2, 50);
    message.historyId = this.currentHistoryId;
    this.history.push({
      id: this.currentHistoryId,
      type,
      message: { id: message.id, threadId: message.threadId, labelIds: [...message.labelIds] },
      ...(changedLabelIds ? { changedLabelIds } : {}),
    });
    this.deps.onChange(changedLabelIds ?? message.labelIds);
  }

  private presentHistory(record: HistoryRecord) {
    const ref = { id: record.message.id, threadId: record.message.threadId };
    const full = { message: { ...ref, labelIds: record.message.labelIds } };
    const base = { id: String(record.id), messages: [ref] };
    switch (record.type) {
      case 'messageAdded':
        return { ...base, messagesAdded: [full] };
      case 'messageDeleted':
        return { ...base, messagesDeleted: [full] };
      case 'labelAdded':
        return { ...base, labelsAdded: [{ ...full, labelIds: record.changedLabelIds ?? [] }] };
      case 'labelRemoved':
        return { ...base, labelsRemoved: [{ ...full, labelIds: record.changedLabelIds ?? [] }] };
    }
  }

  private present(
    message: StoredMessage,
    format: MessageFormat,
    metadataHeaders: string[],
  ): GmailMessageResource {
    const raw = rfc822(message);
    const resource: GmailMessageResource = {
      id: message.id,
      threadId: message.threadId,
      labelIds: [...message.labelIds],
      snippet: snippetOf(message.text),
      sizeEstimate: Buffer.byteLength(raw),
      historyId: String(message.historyId),
      internalDate: String(message.internalDate),
    };
    if (format === 'raw') return { ...resource, raw: Buffer.from(raw).toString('base64url') };
    if (format === 'minimal') return resource;
    const wanted = metadataHeaders.map((h) => h.toLowerCase());
    const headers =
      format === 'metadata' && wanted.length > 0
        ? message.headers.filter((h) => wanted.includes(h.name.toLowerCase()))
        : message.headers;
    const payload: NonNullable<GmailMessageResource['payload']> = {
      partId: '',
      mimeType: 'text/plain',
      filename: '',
      headers: headers.map((h) => ({ ...h })),
    };
    if (format === 'full') {
      payload.body = {
        size: Buffer.byteLength(message.text),
        data: Buffer.from(message.text).toString('base64url'),
      };
    }
    return { ...resource, payload };
  }

  private searchable(m: StoredMessage) {
    const header = (name: string) => m.headers.find((h) => h.name === name)?.value ?? '';
    return {
      from: header('From'),
      to: header('To'),
      cc: header('Cc'),
      subject: header('Subject'),
      snippet: snippetOf(m.text),
      messageId: header('Message-ID'),
      labelIds: m.labelIds,
      internalDate: m.internalDate,
    };
  }

  private live(): StoredMessage[] {
    return [...this.messages.values()].filter((m) => !m.deleted);
  }

  private requireMessage(id: string): StoredMessage {
    const message = this.messages.get(id);
    if (!message || message.deleted) throw googleErrors.historyNotFound();
    return message;
  }

  private findByMessageId(messageId: string): StoredMessage | undefined {
    return [...this.messages.values()].find((m) =>
      m.headers.some((h) => h.name === 'Message-ID' && h.value === messageId),
    );
  }
}

const bracket = (id: string): string => (id.startsWith('<') ? id : `<${id}>`);

const snippetOf = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, 200);

function parseMailDate(date: string | undefined): number | undefined {
  if (date === undefined) return undefined;
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? undefined : ms;
}

/** RFC 2822 date, as mail headers carry it. */
function rfc2822(ms: number): string {
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

function rfc822(message: StoredMessage): string {
  return `${message.headers.map((h) => `${h.name}: ${h.value}`).join('\r\n')}\r\n\r\n${message.text}`;
}
