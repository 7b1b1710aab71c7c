import {
  type Connector,
  gmailConnector,
  googleCalendarConnector,
  googleTasksConnector,
  hubspotConnector,
  microsoftCalendarConnector,
  microsoftMailConnector,
  microsoftTodoConnector,
} from '@syncline/connectors';
import type { EntityType, ProviderKey } from '@syncline/core';

/**
 * What a delete in one system does to a connection's copy: `unlink` (the default, as
 * HubSpot's own two-way sync does: the copy stays, the entity is flagged), `archive` or
 * `delete` (both sent as the provider's delete; HubSpot's delete is an archive anyway).
 */
export const DELETE_POLICIES = ['unlink', 'archive', 'delete'] as const;
export type DeletePolicy = (typeof DELETE_POLICIES)[number];

export const CONNECTORS: Readonly<Record<ProviderKey, Connector>> = {
  hubspot: hubspotConnector,
  'google-calendar': googleCalendarConnector,
  gmail: gmailConnector,
  'google-tasks': googleTasksConnector,
  'microsoft-calendar': microsoftCalendarConnector,
  'microsoft-mail': microsoftMailConnector,
  'microsoft-todo': microsoftTodoConnector,
};

export const isWritable = (provider: ProviderKey, entityType: EntityType): boolean =>
  CONNECTORS[provider].writable.includes(entityType);

/** Records of these types are made in a CRM only from another CRM's record (or a user). */
export const CRM_RECORD_TYPES: ReadonlySet<EntityType> = new Set(['person', 'company', 'deal']);

/**
 * Whether Syncline creates an entity's record in a connection that lacks one. People,
 * companies and deals are created in a CRM only when another CRM has them: a mail
 * correspondent or a meeting guest does not become a CRM contact by being seen. Meetings,
 * tasks and email activity are created wherever they can be written.
 */
export function canCreateIn(
  provider: ProviderKey,
  entityType: EntityType,
  providersLinked: ReadonlySet<ProviderKey>,
): boolean {
  if (!isWritable(provider, entityType)) return false;
  if (CRM_RECORD_TYPES.has(entityType)) return providersLinked.has('hubspot');
  return true;
}

/** The fields of a type a provider can write: every one but those it only reports. */
export const writableField = (provider: ProviderKey, entityType: EntityType, field: string): boolean =>
  !(CONNECTORS[provider].readOnlyFields?.[entityType] ?? []).includes(field);

/**
 * Whether a person's own calendar holds a copy of a meeting someone else organizes: an
 * invitation. Its details are the organizer's to change (their calendar sends the updates), so
 * Syncline writes nothing to it; the organizer's copy and the CRMs are written instead.
 */
export function isInvitationCopy(
  target: PersonalTarget,
  entityType: EntityType,
  values: Readonly<Record<string, unknown>>,
): boolean {
  if (PERSONAL_KIND[target.provider] !== 'calendar' || entityType !== 'meeting') return false;
  const organizer = typeof values.organizer === 'string' ? values.organizer.trim().toLowerCase() : '';
  return (
    organizer !== '' && target.accountAddress !== null && organizer !== target.accountAddress.toLowerCase()
  );
}

/** Connections that are one person's own: a calendar, a task list (a mailbox is only read). */
const PERSONAL_KIND: Partial<Record<ProviderKey, 'calendar' | 'tasks'>> = {
  'google-calendar': 'calendar',
  'microsoft-calendar': 'calendar',
  'google-tasks': 'tasks',
  'microsoft-todo': 'tasks',
};

/** Whether a provider's connections are one person's own calendar or task list. */
export const isPersonal = (provider: ProviderKey): boolean => PERSONAL_KIND[provider] !== undefined;

/** A connection as `belongsIn` needs it. */
export interface PersonalTarget {
  id: string;
  provider: ProviderKey;
  status: string;
  /** Whose calendar or task list it is (lower case), where the provider named it. */
  accountAddress: string | null;
}

/**
 * Whether a record Syncline would create for an entity belongs in this connection, when the
 * connection is one person's own calendar or task list (any other connection: yes). A workspace
 * may hold several salespeople's calendars, on Google and on Microsoft; a meeting copied into
 * every one of them would put other people's meetings in each. So:
 * - a meeting goes to the calendar of its organizer and of each attendee;
 * - where the workspace has this one calendar (one salesperson), every meeting is theirs, as
 *   a meeting booked in a CRM with nobody invited;
 * - a task goes to the workspace's one task list; with several, nothing yet tells whose a task
 *   is (a CRM task's owner is no address), and a task in the wrong person's list is worse than
 *   none, so it is made in none.
 */
export function belongsIn(
  target: PersonalTarget,
  entityType: EntityType,
  values: Readonly<Record<string, unknown>>,
  targets: readonly PersonalTarget[],
): boolean {
  const kind = PERSONAL_KIND[target.provider];
  if (kind === undefined) return true;
  const sameKind = targets.filter((t) => PERSONAL_KIND[t.provider] === kind && t.status !== 'disconnected');
  if (sameKind.length <= 1) return true;
  if (entityType !== 'meeting' || target.accountAddress === null) return false;
  return participantsOf(values).has(target.accountAddress.toLowerCase());
}

/** A meeting's organizer and attendees, by address in lower case. */
function participantsOf(values: Readonly<Record<string, unknown>>): Set<string> {
  const out = new Set<string>();
  const add = (a: unknown) => {
    if (typeof a === 'string' && a.includes('@')) out.add(a.trim().toLowerCase());
  };
  add(values.organizer);
  if (Array.isArray(values.attendees))
    for (const a of values.attendees)
      add(typeof a === 'object' && a !== null ? (a as { email?: unknown }).email : a);
  return out;
}

/**
 * Whether a connection's provider can merge two of its records of this type itself (HubSpot's
 * merge of contacts, companies, deals): a Syncline merge that leaves two of the provider's own
 * records in one connection then owes it that merge (see foldMirrors in provider-merges.ts).
 */
export const canMergeIn = (provider: ProviderKey, entityType: EntityType): boolean =>
  CONNECTORS[provider].merges?.includes(entityType) === true;
