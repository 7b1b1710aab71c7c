import { type DeltaEntry, DeltaJournal, type DeltaToken, type Expand, type Expiry } from '../delta';
import { graphErrors } from '../graph-errors';
import { ignoreChanges, type OnMailboxChange } from '../subscriptions/mailbox-change';
import type { MicrosoftUser } from '../user.store';
import {
  type IdType,
  isFolderId,
  messageIdType,
  newConversationId,
  newFolderId,
  newImmutableId,
  newInternetMessageId,
  newMessageChangeKey,
  newRestId,
  replyConversationIndex,
  rootConversationIndex,
} from './mail-ids';
import {
  addressing,
  type MailFolder,
  type MessageChanges,
  type Placement,
  recipients,
  type StoredMessage,
  type UiMessage,
  WELL_KNOWN_FOLDERS,
  type WellKnownFolder,
} from './mail-message';
import { type ChangeType, type ReceivedFilter, receivedMatches } from './mail-query';

export interface MessageDeltaRequest {
  pageSize: number;
  /** The ids the client sees: a removal names the id the client was given. */
  idType: IdType;
  received?: ReceivedFilter;
  changeType?: ChangeType;
  /** The initial call's options, carried inside the tokens. */
  params: Record<string, string>;
  restartUrl: (params: Record<string, string> | undefined) => string;
}

/**
 * One mailbox's mail: the well-known folders, the messages in them, and a change journal per
 * folder, since Graph's message delta is per folder. A move is a removal from one folder and a
 * new message in the other, under a new REST id (the immutable id stays).
 */
export class MailStore {
  /** The mailbox's root (msgfolderroot): the well-known folders' parent. */
  readonly rootId = newFolderId();
  private readonly folders = new Map<string, MailFolder>();
  private readonly byName = new Map<WellKnownFolder, MailFolder>();
  private readonly byRestId = new Map<string, StoredMessage>();
  private readonly byImmutableId = new Map<string, StoredMessage>();
  /** A conversation's root index, so a reply's index extends it. */
  private readonly conversations = new Map<string, Buffer>();
  private readonly deleted: string[] = [];

  constructor(
    readonly now: () => number,
    private readonly onChange: OnMailboxChange = ignoreChanges,
  ) {
    for (const [wellKnownName, displayName] of Object.entries(WELL_KNOWN_FOLDERS)) {
      const folder: MailFolder = {
        id: newFolderId(),
        wellKnownName: wellKnownName as WellKnownFolder,
        displayName,
        journal: new DeltaJournal<Placement>(),
      };
      this.folders.set(folder.id, folder);
      this.byName.set(folder.wellKnownName, folder);
    }
  }

  /** A folder by id or well-known name (any case, as Graph reads them). */
  folder(idOrName: string): MailFolder {
    const named = this.byName.get(idOrName.toLowerCase() as WellKnownFolder);
    if (named) return named;
    const folder = this.folders.get(idOrName);
    if (folder) return folder;
    if (isFolderId(idOrName)) throw graphErrors.notFound();
    throw graphErrors.malformedId(idOrName);
  }

  allFolders(): MailFolder[] {
    return [...this.folders.values()];
  }

  /** The messages in a folder (every folder when none), newest received first. */
  messages(folder?: MailFolder): Placement[] {
    return [...this.byImmutableId.values()]
      .map((m) => m.placement)
      .filter((p) => folder === undefined || p.folderId === folder.id)
      .sort((a, b) => b.message.fields.receivedAt - a.message.fields.receivedAt);
  }

  /** A mail arriving, sent or saved as a draft, as Outlook would file it. */
  deliver(input: UiMessage, owner: MicrosoftUser): Placement {
    return this.file(input, owner, true);
  }

  /**
   * Mail filed at once as if it had been in the mailbox all along (control API's seed): each
   * as `deliver` files it, without change notifications.
   */
  seed(inputs: readonly UiMessage[], owner: MicrosoftUser): number {
    for (const input of inputs) this.file(input, owner, false);
    return inputs.length;
  }

  private file(input: UiMessage, owner: MicrosoftUser, notify: boolean): Placement {
    const folder = this.folder(input.folder);
    const now = this.now();
    const { from, to } = addressing(input, folder.wellKnownName, owner);
    const outgoing = folder.wellKnownName === 'sentitems' || folder.wellKnownName === 'drafts';
    const isDraft = folder.wellKnownName === 'drafts';
    const conversationId = input.conversationId ?? newConversationId();
    const root = this.conversations.get(conversationId);
    const index = root ? replyConversationIndex(root) : rootConversationIndex(input.sentAt ?? now);
    if (!root) this.conversations.set(conversationId, index);
    const sentAt = isDraft ? null : (input.sentAt ?? input.receivedAt ?? now);
    const message: StoredMessage = {
      immutableId: newImmutableId(),
      created: now,
      version: { changeKey: newMessageChangeKey(), modified: now },
      fields: {
        subject: input.subject,
        body: input.body,
        from,
        toRecipients: to,
        ccRecipients: recipients(input.cc),
        bccRecipients: recipients(input.bcc),
        sentAt,
        receivedAt: input.receivedAt ?? sentAt ?? now,
        internetMessageId: input.internetMessageId ?? newInternetMessageId(from.emailAddress.address),
        conversationId,
        conversationIndex: index.toString('base64'),
        isDraft,
        isRead: input.isRead ?? outgoing,
        importance: input.importance,
        categories: input.categories,
        hasAttachments: input.hasAttachments,
        flag: 'notFlagged',
        inferenceClassification: 'focused',
        meeting: input.meetingRequest ?? null,
      },
      // Set by place(), which makes the placement that points back at the message.
      placement: undefined as unknown as Placement,
    };
    this.byImmutableId.set(message.immutableId, message);
    return this.place(message, folder, notify);
  }

  /** A message by either of its ids; a REST id it had before a move is gone (404). */
  get(id: string): Placement {
    const type = messageIdType(id);
    if (type === undefined) throw graphErrors.malformedId(id);
    const message = type === 'immutable' ? this.byImmutableId.get(id) : this.byRestId.get(id);
    if (!message) throw graphErrors.notFound();
    return message.placement;
  }

  update(id: string, changes: MessageChanges, ifMatch?: string): Placement {
    const { message } = this.requireVersion(id, ifMatch);
    message.fields = { ...message.fields, ...changes };
    message.version = { changeKey: newMessageChangeKey(), modified: this.now() };
    const { placement } = message;
    this.folders.get(placement.folderId)!.journal.put(placement.restId, placement);
    this.changed('updated', placement);
    return placement;
  }

  /** Into another folder: gone from the old one's delta, new in the target's, under a new REST id. */
  move(id: string, target: string): Placement {
    const { message, folderId, restId } = this.get(id);
    const folder = this.folder(target);
    if (folder.id === folderId) return message.placement;
    this.folders.get(folderId)!.journal.remove(restId);
    this.byRestId.delete(restId);
    this.changed('deleted', { ...message.placement });
    message.version = { changeKey: newMessageChangeKey(), modified: this.now() };
    return this.place(message, folder);
  }

  /** Deleted for good (Graph's DELETE puts it out of every folder the client can read). */
  delete(id: string, ifMatch?: string): void {
    const { message, folderId, restId } = this.requireVersion(id, ifMatch);
    this.folders.get(folderId)!.journal.remove(restId);
    this.byRestId.delete(restId);
    this.byImmutableId.delete(message.immutableId);
    this.deleted.push(message.immutableId);
    this.changed('deleted', message.placement);
  }

  /** One page of a folder's message delta round. */
  delta(
    folder: MailFolder,
    token: DeltaToken | undefined,
    request: MessageDeltaRequest,
  ): { entries: DeltaEntry<Placement>[]; next: DeltaToken } {
    return folder.journal.page(token, {
      pageSize: request.pageSize,
      expand: expandFor(request),
      params: request.params,
      restartUrl: request.restartUrl,
    });
  }

  /** Every folder's delta tokens are refused from now on, as Graph does once its sync state is evicted. */
  invalidateDelta(expiry?: Expiry): void {
    for (const folder of this.folders.values()) folder.journal.invalidate(expiry);
  }

  /** Every message where it is, and the immutable ids of those deleted (control API). */
  snapshot(): { placements: Placement[]; deletedIds: string[] } {
    return { placements: this.messages(), deletedIds: [...this.deleted] };
  }

  private place(message: StoredMessage, folder: MailFolder, notify = true): Placement {
    const placement: Placement = { message, folderId: folder.id, restId: newRestId(), placedAt: 0 };
    message.placement = placement;
    this.byRestId.set(placement.restId, message);
    placement.placedAt = folder.journal.put(placement.restId, placement);
    if (notify) this.changed('created', placement);
    return placement;
  }

  /** A move is told as a deletion from one folder and a creation in the other, as the journals see it. */
  private changed(changeType: ChangeType, p: Placement): void {
    const { immutableId, version } = p.message;
    this.onChange({
      area: 'messages',
      changeType,
      id: p.restId,
      immutableId,
      folderId: p.folderId,
      changeKey: version.changeKey,
    });
  }

  private requireVersion(id: string, ifMatch: string | undefined): Placement {
    const placement = this.get(id);
    const given = ifMatch?.trim();
    if (given !== undefined && given !== '*') {
      const { changeKey } = placement.message.version;
      if (given !== `W/"${changeKey}"` && given !== `"${changeKey}"` && given !== changeKey)
        throw graphErrors.preconditionFailed();
    }
    return placement;
  }
}

/** How one changed journal entry reads in a delta page, under the request's filter and changeType. */
function expandFor(request: MessageDeltaRequest): Expand<Placement, Placement> {
  const { received, changeType, idType } = request;
  const shown = (p: Placement) => receivedMatches(received, p.message.fields.receivedAt);
  return ({ item, last, removed, since, initial }) => {
    if (item) {
      if (!shown(item)) return [];
      if (!initial && changeType !== undefined) {
        const created = item.placedAt > since;
        if (changeType === 'deleted' || (changeType === 'created') !== created) return [];
      }
      return [{ kind: 'item', id: item.restId, item }];
    }
    if (initial || !last || !removed || !shown(last)) return [];
    if (changeType !== undefined && changeType !== 'deleted') return [];
    const id = idType === 'immutable' ? last.message.immutableId : last.restId;
    return [{ kind: 'removed', id, reason: removed }];
  };
}
