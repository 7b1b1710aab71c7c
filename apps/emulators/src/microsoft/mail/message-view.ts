import type { Json } from '../calendar/calendar-event';
import { type BodyType, bodyPreview, renderBody } from '../calendar/event-body';
import { etagOf } from '../calendar/event-ids';
import { formatWall } from '../calendar/time-zones';
import { graphErrors } from '../graph-errors';
import type { IdType } from './mail-ids';
import type { MailFolder, Placement } from './mail-message';

export interface MessageRenderOptions {
  idType: IdType;
  bodyType: BodyType;
}

export const MESSAGE_TYPE = '#microsoft.graph.message';
export const EVENT_MESSAGE_TYPE = '#microsoft.graph.eventMessage';

/** The message as Graph returns it, every property present, in Graph's order. */
export function renderMessage(placement: Placement, opts: MessageRenderOptions): Json {
  const { message, folderId, restId } = placement;
  const f = message.fields;
  const id = opts.idType === 'immutable' ? message.immutableId : restId;
  const out: Json = {
    ...(f.meeting ? { '@odata.type': EVENT_MESSAGE_TYPE } : {}),
    '@odata.etag': etagOf(message.version.changeKey),
    id,
    createdDateTime: utcSeconds(message.created),
    lastModifiedDateTime: utcSeconds(message.version.modified),
    changeKey: message.version.changeKey,
    categories: f.categories,
    receivedDateTime: utcSeconds(f.receivedAt),
    sentDateTime: f.sentAt === null ? null : utcSeconds(f.sentAt),
    hasAttachments: f.hasAttachments,
    internetMessageId: f.internetMessageId,
    subject: f.subject,
    bodyPreview: bodyPreview(f.body),
    importance: f.importance,
    parentFolderId: folderId,
    conversationId: f.conversationId,
    conversationIndex: f.conversationIndex,
    isDeliveryReceiptRequested: false,
    isReadReceiptRequested: false,
    isRead: f.isRead,
    isDraft: f.isDraft,
    webLink: `https://outlook.office365.com/owa/?ItemID=${encodeURIComponent(id)}&exvsurl=1&viewmodel=ReadMessageItem`,
    inferenceClassification: f.inferenceClassification,
    body: renderBody(f.body, opts.bodyType),
    sender: f.from,
    from: f.from,
    toRecipients: f.toRecipients,
    ccRecipients: f.ccRecipients,
    bccRecipients: f.bccRecipients,
    replyTo: [],
    flag: { flagStatus: f.flag },
  };
  if (!f.meeting) return out;
  const m = f.meeting;
  return {
    ...out,
    meetingMessageType: m.type,
    type: 'singleInstance',
    isOutOfDate: false,
    isAllDay: m.isAllDay,
    isDelegated: false,
    startDateTime: { dateTime: formatWall(m.start), timeZone: 'UTC' },
    endDateTime: { dateTime: formatWall(m.end), timeZone: 'UTC' },
    location: {
      displayName: m.location,
      locationType: 'default',
      uniqueIdType: m.location === '' ? 'unknown' : 'private',
      ...(m.location === '' ? {} : { uniqueId: m.location }),
    },
    recurrence: null,
  };
}

/** Exchange's message timestamps have whole seconds. */
const utcSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * `$select`: Graph keeps `@odata.type`, `@odata.etag` and `id` whatever is selected, and
 * refuses a name the type does not have (an eventMessage's own names pass on any message).
 */
export function selectMessage(rendered: Json, select: string[] | undefined): Json {
  if (select === undefined) return rendered;
  const out: Json = {};
  for (const key of ['@odata.type', '@odata.etag', 'id']) if (key in rendered) out[key] = rendered[key];
  for (const name of select) {
    if (!MESSAGE_PROPERTIES.has(name))
      throw graphErrors.badRequest(
        `Could not find a property named '${name}' on type 'microsoft.graph.message'.`,
      );
    if (name in rendered) out[name] = rendered[name];
  }
  return out;
}

/** Names `$select` accepts: message's (uniqueBody and internetMessageHeaders are never filled here) and eventMessage's. */
const MESSAGE_PROPERTIES = new Set([
  'id',
  'categories',
  'changeKey',
  'createdDateTime',
  'lastModifiedDateTime',
  'bccRecipients',
  'body',
  'bodyPreview',
  'ccRecipients',
  'conversationId',
  'conversationIndex',
  'flag',
  'from',
  'hasAttachments',
  'importance',
  'inferenceClassification',
  'internetMessageHeaders',
  'internetMessageId',
  'isDeliveryReceiptRequested',
  'isDraft',
  'isRead',
  'isReadReceiptRequested',
  'parentFolderId',
  'receivedDateTime',
  'replyTo',
  'sender',
  'sentDateTime',
  'subject',
  'toRecipients',
  'uniqueBody',
  'webLink',
  'meetingMessageType',
  'type',
  'isOutOfDate',
  'isAllDay',
  'isDelegated',
  'startDateTime',
  'endDateTime',
  'location',
  'recurrence',
]);

/** A folder as Graph returns it, with its counts. */
export function renderFolder(folder: MailFolder, parentId: string, messages: Placement[]): Json {
  return {
    id: folder.id,
    displayName: folder.displayName,
    parentFolderId: parentId,
    childFolderCount: 0,
    unreadItemCount: messages.filter((p) => !p.message.fields.isRead).length,
    totalItemCount: messages.length,
    isHidden: false,
  };
}
