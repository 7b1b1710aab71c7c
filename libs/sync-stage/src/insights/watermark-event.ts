import type { EntityType, ProviderKey, SourceChangeInput } from '@syncline/core';
import type { LogEvent } from '@syncline/log';

/**
 * The activity types whose event time a provider's cursor vouches for: a watermark of its
 * connection is one `watermark` event per type. Task lists have no activities.
 */
export const WATERMARKED_TYPES: Readonly<Record<ProviderKey, readonly EntityType[]>> = {
  hubspot: ['email_activity', 'meeting'],
  gmail: ['email_activity'],
  'microsoft-mail': ['email_activity'],
  'google-calendar': ['meeting'],
  'microsoft-calendar': ['meeting'],
  'google-tasks': [],
  'microsoft-todo': [],
};

/** The external id a watermark event carries: it names no record. */
export const WATERMARK_RECORD = 'watermark';

/**
 * A pull's watermark as log events: the connection has delivered every activity of each type
 * that happened before `at`. On the log, so a fold from zero meets each where the pull put it,
 * after the pages it vouches for. The event key is the instant: a pull that reads again and
 * finds the same watermark appends nothing.
 */
export function watermarkChanges(
  connection: { id: string; workspaceId: string; provider: ProviderKey },
  at: Date,
): SourceChangeInput[] {
  const ms = at.getTime();
  return WATERMARKED_TYPES[connection.provider].map((entityType) => ({
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    entityType,
    externalId: WATERMARK_RECORD,
    op: 'watermark',
    eventKey: `watermark:${entityType}:${ms}`,
    eventTime: at,
  }));
}

export interface Watermark {
  connectionId: string;
  workspaceId: string;
  at: number;
}

/** The watermark an event states; undefined for any other event. */
export function watermarkOf(event: LogEvent): Watermark | undefined {
  if (event.op !== 'watermark') return undefined;
  return { connectionId: event.connectionId, workspaceId: event.workspaceId, at: event.eventTime.getTime() };
}
