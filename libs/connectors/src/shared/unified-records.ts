/**
 * The unified fields of the activity records several connectors report (UNIFIED_FIELDS in
 * @syncline/core), in one place: a meeting read from Google Calendar or Outlook, a mail from
 * Gmail or Outlook, a task from Google Tasks or To Do carry the same names and types, so that
 * two copies of one record read alike and merge.
 */

/** Who a change belongs to. */
export interface ChangeScope {
  workspaceId: string;
  connectionId: string;
}

export interface MeetingAttendee {
  email: string;
  name?: string;
  responseStatus: string;
  organizer?: boolean;
}

/**
 * A meeting: times are UTC ISO strings, or `YYYY-MM-DD` for all-day events; a participants
 * list of addresses with response status; the organizer's address.
 */
export interface MeetingFields {
  title: string | null;
  description: string | null;
  location: string | null;
  startAt: string | null;
  endAt: string | null;
  allDay: boolean;
  status: string | null;
  organizer: string | null;
  attendees: MeetingAttendee[];
  iCalUID: string | null;
}

/**
 * A mail, metadata only (no `text`): lower-cased addresses (identity resolves them to people),
 * ISO UTC times, `direction` outbound for a message labelled SENT, else inbound.
 */
export interface EmailActivityFields {
  messageId: string | null;
  threadId: string | null;
  subject: string | null;
  from: string | null;
  fromName: string | null;
  to: string[];
  cc: string[];
  sentAt: string | null;
  occurredAt: string | null;
  labelIds: string[];
  direction: 'inbound' | 'outbound';
}

/** A task: `notes` never carries a marker of ours; times are ISO UTC strings. */
export interface TaskFields {
  title: string | null;
  notes: string | null;
  status: 'open' | 'completed';
  dueAt: string | null;
  completedAt: string | null;
  listId: string;
  parentId: string | null;
}
