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

/**
 * Whether a connection's provider can merge two of its records of this type itself (HubSpot's
 * merge of contacts, companies, deals): a Syncline merge that leaves two of the provider's own
 * records in one connection then owes it that merge (see foldMirrors in provider-merges.ts).
 */
export const canMergeIn = (provider: ProviderKey, entityType: EntityType): boolean =>
  CONNECTORS[provider].merges?.includes(entityType) === true;
