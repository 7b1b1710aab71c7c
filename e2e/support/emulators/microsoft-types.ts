// The Microsoft 365 emulator's shapes (docs/microsoft.md).

import type { MicrosoftUser } from '@syncline/emulators';

export type { MicrosoftUser };

export interface MicrosoftApp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  displayName: string;
}

export interface MicrosoftGrant {
  accessToken: string;
  refreshToken: string;
  /** Seconds. */
  expiresIn: number;
  /** The granted scopes, space-separated. */
  scope: string;
}

export interface GraphDateTimeZone {
  /** Wall-clock time without an offset (Graph renders seven fractional digits). */
  dateTime: string;
  timeZone: string;
}

export interface GraphRecipient {
  emailAddress: { name: string; address: string };
}

export type AttendeeResponse =
  | 'none'
  | 'organizer'
  | 'tentativelyAccepted'
  | 'accepted'
  | 'declined'
  | 'notResponded';

export interface OutlookAttendeeInput {
  type?: 'required' | 'optional' | 'resource';
  emailAddress: { name?: string; address: string };
  status?: { response: AttendeeResponse; time?: string };
}

/** Graph's event body, as a person's Outlook writes it (calendar/calendar-event.ts). */
export interface OutlookEventInput {
  subject?: string;
  body?: { contentType: 'text' | 'html'; content: string };
  start?: GraphDateTimeZone;
  end?: GraphDateTimeZone;
  isAllDay?: boolean;
  location?: { displayName: string } | null;
  attendees?: OutlookAttendeeInput[];
  categories?: string[];
  importance?: 'low' | 'normal' | 'high';
  showAs?: 'unknown' | 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere';
  isOnlineMeeting?: boolean;
  onlineMeetingProvider?: 'unknown' | 'skypeForBusiness' | 'skypeForConsumer' | 'teamsForBusiness';
  recurrence?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface OutlookEvent {
  id: string;
  iCalUId: string;
  changeKey: string;
  subject: string;
  start: GraphDateTimeZone;
  end: GraphDateTimeZone;
  attendees: Array<{
    type: string;
    emailAddress: { name: string; address: string };
    status: { response: string; time: string };
  }>;
  organizer: GraphRecipient;
  isOrganizer: boolean;
  lastModifiedDateTime: string;
  [key: string]: unknown;
}

export type MailAddressInput = string | { name?: string; address: string };

/** A mail as it happens in Outlook (mail/mail-message.ts `uiMessageBody`). */
export interface OutlookMailInput {
  /** A well-known folder (`inbox`, `sentitems`, `drafts`, `deleteditems`, `archive`) or a folder id. Default inbox. */
  folder?: string;
  /** Required for received mail; sent mail and drafts come from the mailbox's owner. */
  from?: MailAddressInput;
  to?: MailAddressInput | MailAddressInput[];
  cc?: MailAddressInput | MailAddressInput[];
  bcc?: MailAddressInput | MailAddressInput[];
  subject?: string;
  /** Plain text, or an itemBody. */
  body?: string | { contentType: 'text' | 'html'; content: string };
  /** RFC 3339 with an offset. */
  sentAt?: string;
  receivedAt?: string;
  /** `<local@domain>`; one is made when absent. */
  internetMessageId?: string;
  /** Mail with the same conversationId is one conversation; a new one is made when absent. */
  conversationId?: string;
  isRead?: boolean;
  importance?: 'low' | 'normal' | 'high';
  categories?: string[];
  hasAttachments?: boolean;
  meetingRequest?: {
    type?:
      | 'meetingRequest'
      | 'meetingCancelled'
      | 'meetingAccepted'
      | 'meetingTenativelyAccepted'
      | 'meetingDeclined';
    start: string;
    end: string;
    isAllDay?: boolean;
    location?: string;
  };
}

export interface OutlookMessage {
  id: string;
  /** The id `Prefer: IdType="ImmutableId"` gives: it survives moves. */
  immutableId: string;
  internetMessageId: string;
  conversationId: string;
  subject: string;
  parentFolderId: string;
  from: GraphRecipient;
  toRecipients: GraphRecipient[];
  ccRecipients: GraphRecipient[];
  receivedDateTime: string;
  sentDateTime: string | null;
  isRead: boolean;
  isDraft: boolean;
  /** In the mailbox listing: the well-known folder the message is in. */
  folder?: string;
  [key: string]: unknown;
}

export interface OutlookMessageChanges {
  isRead?: boolean;
  categories?: string[];
  importance?: 'low' | 'normal' | 'high';
  flag?: { flagStatus: 'notFlagged' | 'complete' | 'flagged' };
  inferenceClassification?: 'focused' | 'other';
}

export type TodoStatus = 'notStarted' | 'inProgress' | 'completed' | 'waitingOnOthers' | 'deferred';

/** Graph's todoTask body (todo/todo-task.ts); `listId` picks the list (default list when absent). */
export interface TodoTaskInput {
  title?: string;
  body?: { contentType: 'text' | 'html'; content: string };
  status?: TodoStatus;
  importance?: 'low' | 'normal' | 'high';
  isReminderOn?: boolean;
  categories?: string[];
  dueDateTime?: GraphDateTimeZone | null;
  completedDateTime?: GraphDateTimeZone | null;
  startDateTime?: GraphDateTimeZone | null;
  reminderDateTime?: GraphDateTimeZone | null;
  listId?: string;
  [key: string]: unknown;
}

export interface TodoTask {
  id: string;
  title: string;
  status: TodoStatus;
  importance: string;
  body: { content: string; contentType: string };
  dueDateTime?: GraphDateTimeZone;
  completedDateTime?: GraphDateTimeZone;
  lastModifiedDateTime: string;
  /** In the listing: the list the task is in. */
  listId?: string;
  [key: string]: unknown;
}

export interface TodoList {
  id: string;
  displayName: string;
  wellknownListName?: string;
  tasks: TodoTask[];
  [key: string]: unknown;
}

export type MicrosoftArea = 'calendar' | 'mail' | 'todo';

export interface MicrosoftSubscription {
  id: string;
  resource: string;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string | null;
  expirationDateTime: string;
  clientState?: string | null;
  userPrincipalName: string;
  [key: string]: unknown;
}

export interface MicrosoftDelivery {
  outcome: string;
  [key: string]: unknown;
}

export interface MicrosoftSubscriptionSettings {
  maxExpirationMinutes?: number;
  validationTimeoutMs?: number;
  batchWindowMs?: number;
  responseTimeoutMs?: number;
  retryBaseMs?: number;
  retryForMs?: number;
}
