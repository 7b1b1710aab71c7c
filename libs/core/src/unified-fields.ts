import type { EntityType } from './source-change';

/**
 * The unified field vocabulary: one name and one value format per concept, per entity type.
 * Every connector reads provider records into these names and writes them back from them, so
 * the sync engine can merge one canonical entity's fields across providers. Conversions
 * between a provider's spelling and these formats live in the connector's mapper, both ways,
 * so that a value read and written back unchanged leaves the record unchanged, and a record
 * read back after a write hashes like the fields written (write receipts).
 *
 * Formats, everywhere:
 * - Times are ISO 8601 UTC strings with milliseconds (`2026-12-01T10:00:00.000Z`); a date
 *   without a time (all-day meetings only) is `YYYY-MM-DD`.
 * - Enumerations are lower-case strings, listed with each field. A provider value that has no
 *   unified spelling is passed through unchanged, so it still round-trips.
 * - Email addresses we derive from headers are lower-cased.
 * - `null` means "no value"; writing `null` clears the field in the provider.
 *
 * A provider need not carry every field; the description says which ones do when only some
 * do. Per-connection field mappings (HubSpot custom properties) may add fields outside this
 * vocabulary; those are free text.
 */
export const UNIFIED_FIELDS = {
  person: {
    email: 'Primary email address (string).',
    firstName: 'Given name (string).',
    lastName: 'Family name (string).',
    phone: 'Phone number as entered (string; no normalisation).',
    company: 'Employer name as free text on the person (string), not a company link.',
    jobTitle: 'Job title (string).',
    lifecycleStage:
      'Lifecycle stage internal name (string): subscriber | lead | marketingqualifiedlead | ' +
      'salesqualifiedlead | opportunity | customer | evangelist | other, or a custom stage id.',
    ownerId: 'Owner (user) id in the source system (string).',
  },
  company: {
    name: 'Company name (string).',
    domain: 'Primary web domain without scheme (string), e.g. `acme.com`.',
    phone: 'Phone number as entered (string).',
    industry: 'Industry code as the provider spells it (string), e.g. `COMPUTER_SOFTWARE`.',
    city: 'City (string).',
    country: 'Country name as entered (string).',
    ownerId: 'Owner (user) id in the source system (string).',
  },
  deal: {
    name: 'Deal name (string).',
    amount: "Deal amount (number) in the deal's currency.",
    stage: 'Pipeline stage id (string; provider-specific, e.g. `closedwon`).',
    pipeline: 'Pipeline id (string).',
    closeDate: 'Expected or actual close time (ISO UTC string).',
    ownerId: 'Owner (user) id in the source system (string).',
  },
  meeting: {
    title: 'Meeting title (string).',
    description: 'Meeting notes / body (string).',
    location: 'Location or conference link as free text (string).',
    startAt:
      'Start (ISO UTC string), or `YYYY-MM-DD` when allDay. HubSpot has no all-day meetings: ' +
      'a date is written there as midnight UTC and reads back as a full ISO UTC time.',
    endAt: 'End (ISO UTC string), or `YYYY-MM-DD` when allDay (exclusive: the day after the last one).',
    allDay: 'Whether the meeting spans whole days (boolean). Google Calendar and Outlook only.',
    status:
      'Event status: confirmed | tentative | cancelled. Google Calendar and Outlook (always confirmed: a cancelled event is a delete).',
    outcome:
      'Meeting outcome: scheduled | completed | rescheduled | no_show | canceled (or a custom ' +
      'outcome id, unchanged). HubSpot only.',
    organizer: "Organizer's email address (string). Google Calendar and Outlook only; not written.",
    attendees:
      'Participants: array of { email, name?, responseStatus: needsAction | declined | tentative | ' +
      'accepted, organizer?: true }. Google Calendar and Outlook only.',
    iCalUID:
      'iCalendar UID shared by every copy of the event (string). Google Calendar and Outlook (iCalUId) only; not written.',
    ownerId: 'Owner (user) id in the source system (string). HubSpot only.',
  },
  email_activity: {
    messageId:
      'RFC 5322 Message-ID header, angle brackets included (string). Gmail, and Outlook (internetMessageId).',
    threadId: 'Provider thread id (string). Gmail threadId, Outlook conversationId.',
    subject: 'Subject line (string).',
    text: 'Plain-text body (string). HubSpot only: Gmail and Outlook are read as metadata, never bodies.',
    from: "Sender's address, lower-cased (string). Gmail and Outlook only.",
    fromName: "Sender's display name (string). Gmail and Outlook only.",
    to: 'Recipient addresses, lower-cased (string[]). Gmail and Outlook only.',
    cc: 'Copied addresses, lower-cased (string[]). Gmail and Outlook only.',
    sentAt:
      'When the email was sent (ISO UTC string): Gmail Date header, Outlook sentDateTime, HubSpot hs_timestamp.',
    occurredAt:
      'When the mailbox recorded the message (ISO UTC string). Gmail internalDate, Outlook receivedDateTime.',
    labelIds:
      'Gmail label ids, sorted (string[]). Gmail; Outlook in the same names (INBOX, SENT, UNREAD, STARRED for a flag) plus its categories.',
    direction:
      'inbound | outbound | forwarded. Gmail and Outlook: SENT label → outbound, else inbound. HubSpot: ' +
      'INCOMING_EMAIL ↔ inbound, EMAIL ↔ outbound, FORWARDED_EMAIL ↔ forwarded.',
    status:
      'Send status: sent | sending | scheduled | bounced | failed (HubSpot hs_email_status). ' +
      'HubSpot only.',
    ownerId: 'Owner (user) id in the source system (string). HubSpot only.',
  },
  task: {
    title: 'Task title (string).',
    notes: 'Task body (string), without any Syncline marker.',
    status:
      'open | completed. HubSpot: COMPLETED ↔ completed, every other hs_task_status ↔ open ' +
      '(written as NOT_STARTED, or as the progress when one is given).',
    progress:
      'Where an open task stands: in_progress | waiting | deferred, null when not started or ' +
      'completed. HubSpot only (hs_task_status, lower-cased); it makes status round-trip: writing ' +
      '{ status: open, progress: in_progress } sends IN_PROGRESS. Ignored when status is completed.',
    priority: 'none | low | medium | high. HubSpot only.',
    dueAt: 'Due time (ISO UTC string). Google Tasks keeps the date only (midnight UTC).',
    completedAt: 'When the task was completed (ISO UTC string). Google Tasks only; not written.',
    listId: 'Google Tasks list id (string). Google Tasks only; not written.',
    parentId: 'Parent task id (string). Google Tasks only; not written.',
    ownerId: 'Owner (user) id in the source system (string). HubSpot only.',
  },
} as const satisfies Record<EntityType, Readonly<Record<string, string>>>;

/** The unified field names of one entity type. */
export type UnifiedFieldName<T extends EntityType> = keyof (typeof UNIFIED_FIELDS)[T] & string;

/** Whether `field` is in the unified vocabulary of `entityType`. */
export const isUnifiedField = (entityType: EntityType, field: string): boolean =>
  Object.hasOwn(UNIFIED_FIELDS[entityType], field);

/** The JSON type of a field's value: what an edit or a conflict's resolution may write to it. */
export type FieldValueType = 'text' | 'number' | 'boolean' | 'text list' | 'attendee list';

/** The fields that hold something other than text (every other one, custom fields too, holds text). */
const VALUE_TYPES: {
  readonly [T in EntityType]?: Readonly<Partial<Record<UnifiedFieldName<T>, FieldValueType>>>;
} = {
  deal: { amount: 'number' },
  meeting: { allDay: 'boolean', attendees: 'attendee list' },
  email_activity: { to: 'text list', cc: 'text list', labelIds: 'text list' },
};

/** The type of a field's value; a field outside the vocabulary (a mapping's custom field) is text. */
export function fieldValueType(entityType: EntityType, field: string): FieldValueType {
  const types: Readonly<Record<string, FieldValueType | undefined>> = VALUE_TYPES[entityType] ?? {};
  return (Object.hasOwn(types, field) ? types[field] : undefined) ?? 'text';
}

/** Enumerated values, as spelled in unified fields. */
export const TASK_STATUSES = ['open', 'completed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TASK_PROGRESSES = ['in_progress', 'waiting', 'deferred'] as const;
export const TASK_PRIORITIES = ['none', 'low', 'medium', 'high'] as const;
export const EMAIL_DIRECTIONS = ['inbound', 'outbound', 'forwarded'] as const;
export type EmailDirection = (typeof EMAIL_DIRECTIONS)[number];
export const EMAIL_STATUSES = ['sent', 'sending', 'scheduled', 'bounced', 'failed'] as const;
export const MEETING_STATUSES = ['confirmed', 'tentative', 'cancelled'] as const;
export const MEETING_OUTCOMES = ['scheduled', 'completed', 'rescheduled', 'no_show', 'canceled'] as const;
