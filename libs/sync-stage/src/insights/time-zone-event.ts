import type { SourceChangeInput } from '@syncline/core';
import { z } from 'zod';

/**
 * A new zone for a workspace's days, as an event of the change log: appended to the
 * workspace's partition under its own connection, in the transaction that saves it (the API's
 * PUT /api/v1/workspace/time-zone). The sync stage cuts the activity insights' days in it from
 * there on: the windows are folded again from what every activity counts for, in the new zone,
 * and the results replace the old ones. A fold from zero meets it at the same place.
 */

/** The event's record: one per workspace. */
export const TIME_ZONE_RECORD = 'time-zone';

export interface TimeZoneChange {
  /** IANA name (`Europe/Paris`). */
  timeZone: string;
  /** The setting's revision: one event per revision. */
  version: number;
}

/** Whether the runtime knows the zone (an IANA name, or UTC). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return name.length > 0 && name.length <= 64;
  } catch {
    return false;
  }
}

const fields = z.strictObject({
  timeZone: z.string().refine(isTimeZone, 'an IANA time zone'),
  version: z.number().int().nonnegative(),
});

/** The log change that puts `change` in force for the workspace. */
export function timeZoneChangeInput(
  workspaceId: string,
  ownConnectionId: string,
  change: TimeZoneChange,
  at: Date = new Date(),
): SourceChangeInput {
  return {
    workspaceId,
    connectionId: ownConnectionId,
    entityType: 'person',
    externalId: TIME_ZONE_RECORD,
    op: 'time_zone',
    eventKey: `time_zone:${change.version}`,
    eventTime: at,
    fields: { timeZone: change.timeZone, version: change.version },
  };
}

/** Thrown for a `time_zone` event the stage cannot read: the consumer dead-letters it. */
export class UnreadableTimeZoneEvent extends Error {
  override name = 'UnreadableTimeZoneEvent';
}

/** The zone a `time_zone` event puts in force, with its workspace; undefined for any other event. */
export function timeZoneChangeOf(event: {
  op: string;
  workspaceId: string;
  fields: Record<string, unknown>;
}): (TimeZoneChange & { workspaceId: string }) | undefined {
  if (event.op !== 'time_zone') return undefined;
  const parsed = fields.safeParse(event.fields);
  if (!parsed.success)
    throw new UnreadableTimeZoneEvent(`a time zone event is unreadable: ${z.prettifyError(parsed.error)}`);
  return { workspaceId: event.workspaceId, ...parsed.data };
}
