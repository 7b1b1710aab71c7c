import { ENTITY_TYPES, type EntityType, type SourceChangeInput } from '@syncline/core';
import { z } from 'zod';
import type { PolicyMap } from './types';

/**
 * A replacement of one entity type's field policies, as an event of the change log: appended
 * to the workspace's partition, under the workspace's own connection, in the transaction that
 * saves the set (the API's PUT /api/v1/policies/{type}). The sync stage folds it into
 * `policy_in_force` (PgMergeStore.replacePolicies), and every change after it on the log is
 * merged under it: live, in a fold from zero, whichever process folds it.
 */

/** The event's record: one per entity type of a workspace. */
export const POLICY_EXTERNAL_ID = 'policies';

export interface PolicyChange {
  entityType: EntityType;
  /** The set's version (its revision): one event per version. */
  version: number;
  /** field → policy, lww fields left out. */
  policies: PolicyMap;
}

const fieldPolicy = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('lww') }),
  z.strictObject({ kind: z.literal('priority'), order: z.array(z.string().min(1)) }),
  z.strictObject({ kind: z.literal('manual') }),
  z.strictObject({ kind: z.literal('union') }),
]);

const policyFields = z.strictObject({
  version: z.number().int().nonnegative(),
  policies: z.record(z.string().min(1), fieldPolicy),
});

export const policyEventKey = (entityType: EntityType, version: number): string =>
  `policy:${entityType}:${version}`;

/** The log change that puts `change` in force for the workspace. */
export function policyChangeInput(
  workspaceId: string,
  ownConnectionId: string,
  change: PolicyChange,
  at: Date = new Date(),
): SourceChangeInput {
  return {
    workspaceId,
    connectionId: ownConnectionId,
    entityType: change.entityType,
    externalId: POLICY_EXTERNAL_ID,
    op: 'policy',
    eventKey: policyEventKey(change.entityType, change.version),
    eventTime: at,
    fields: { version: change.version, policies: change.policies },
  };
}

/** Thrown for a `policy` event the stage cannot read: the consumer dead-letters it. */
export class UnreadablePolicyEvent extends Error {
  override name = 'UnreadablePolicyEvent';
}

/** The set a `policy` event puts in force; undefined for any other event. */
export function policyChangeOf(event: {
  op: string;
  entityType: string;
  fields: Record<string, unknown>;
}): PolicyChange | undefined {
  if (event.op !== 'policy') return undefined;
  if (!(ENTITY_TYPES as readonly string[]).includes(event.entityType))
    throw new UnreadablePolicyEvent(`a policy event names no entity type of ours: ${event.entityType}`);
  const parsed = policyFields.safeParse(event.fields);
  if (!parsed.success)
    throw new UnreadablePolicyEvent(`a policy event's set is unreadable: ${z.prettifyError(parsed.error)}`);
  return {
    entityType: event.entityType as EntityType,
    version: parsed.data.version,
    policies: parsed.data.policies,
  };
}
