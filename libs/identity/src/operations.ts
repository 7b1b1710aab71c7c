import { ENTITY_TYPES, type EntityType, type SourceChangeInput } from '@syncline/core';
import { z } from 'zod';
import { uuidV5 } from './stable-id';

/** Merge `absorbedId` into `survivorId`: its source links move to the survivor. */
export interface MergeIntent {
  kind: 'merge';
  operationId: string;
  workspaceId: string;
  entityType: EntityType;
  survivorId: string;
  absorbedId: string;
  /** Who asked for it (an API key id): an unmerge clears in their name what only the survivor had. */
  requestedBy?: string;
  /**
   * Why identity made it by itself: a record whose strong keys named both entities (one address
   * of each). Such a join never asks a provider to merge its own records.
   */
  reason?: LinkReason;
}

/** Why a source record is linked to its entity, or two entities were joined: shown to admins. */
export interface LinkReason {
  /** `created` (a record no key or name matched), `shared-key` (a deterministic key), `merge`, … */
  rule: string;
  /** The keys that agreed (`email:ana@acme.com`), or the review evidence a person decided on. */
  evidence: string[];
  /** 1 for a key; a person's decision is 1 too. */
  score: number;
}

/** Undo a merge: the links it moved go back and the absorbed entity lives again. */
export interface UnmergeIntent {
  kind: 'unmerge';
  operationId: string;
  workspaceId: string;
  entityType: EntityType;
  /** The merge operation to undo. */
  undoes: string;
  requestedBy?: string;
}

export type IdentityIntent = MergeIntent | UnmergeIntent;

/**
 * Not the same: a person dismissed a possible duplicate, which is never suggested again. On the
 * log like a merge, so a fold of the log dismisses it again at the same point; it moves no link
 * and is no `identity_operation` (there is nothing to undo).
 */
export interface DismissIntent {
  kind: 'dismiss';
  /** One per pair (`dismissOperationId`): dismissing twice is one event. */
  operationId: string;
  workspaceId: string;
  entityType: EntityType;
  duplicateId: string;
  requestedBy?: string;
}

/** What the log carries for identity: a merge, an unmerge or a dismissal. */
export type IdentityLogOperation = IdentityIntent | DismissIntent;

/** The dismissal of a pair, one id whoever dismisses it and however often. */
export const dismissOperationId = (workspaceId: string, duplicateId: string): string =>
  uuidV5(`dismiss:${workspaceId}:${duplicateId.toLowerCase()}`);

export interface MovedLink {
  connectionId: string;
  entityType: string;
  externalId: string;
}

/** What an applied operation did, stored as `identity_operation.payload`. */
export type OperationPayload =
  | (MergeIntent & { movedLinks: MovedLink[]; duplicates: { id: string; status: string }[] })
  | (UnmergeIntent & { survivorId: string; absorbedId: string; restoredLinks: MovedLink[] });

const intentSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('merge'),
    operationId: z.uuid(),
    workspaceId: z.uuid(),
    entityType: z.enum(ENTITY_TYPES),
    survivorId: z.uuid(),
    absorbedId: z.uuid(),
    requestedBy: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({
    kind: z.literal('unmerge'),
    operationId: z.uuid(),
    workspaceId: z.uuid(),
    entityType: z.enum(ENTITY_TYPES),
    undoes: z.uuid(),
    requestedBy: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({
    kind: z.literal('dismiss'),
    operationId: z.uuid(),
    workspaceId: z.uuid(),
    entityType: z.enum(ENTITY_TYPES),
    duplicateId: z.uuid(),
    requestedBy: z.string().min(1).max(200).optional(),
  }),
]);

/** The field of a log event's `fields` that carries an identity operation. */
export const IDENTITY_OPERATION_FIELD = 'identityOperation';

/**
 * An identity operation as a change for the log. It is appended like any change (op
 * `merge`, event key `identity-operation:<id>`, so a second delivery is dropped at the door)
 * under a connection of the workspace chosen by the caller (the API's own connection), and
 * the identity consumer applies it in order with the source changes around it. Replay from
 * offset 0 therefore re-applies it at the same point; entity ids are derived from source
 * records (`entityIdFor`), so the ids it names exist again at that point.
 */
export function identityOperationChange(
  intent: IdentityLogOperation,
  connectionId: string,
  eventTime: Date = new Date(),
): SourceChangeInput {
  const key = `identity-operation:${intent.operationId}`;
  return {
    workspaceId: intent.workspaceId,
    connectionId,
    entityType: intent.entityType,
    externalId: key,
    op: 'merge',
    eventKey: key,
    eventTime,
    fields: { [IDENTITY_OPERATION_FIELD]: intent },
  };
}

/** The operation a log event carries, if it is one. */
export function identityOperationOf(
  op: string,
  fields: Record<string, unknown>,
): IdentityLogOperation | undefined {
  if (op !== 'merge' || !(IDENTITY_OPERATION_FIELD in fields)) return undefined;
  const parsed = intentSchema.safeParse(fields[IDENTITY_OPERATION_FIELD]);
  // A malformed operation on the log is a bug upstream: let it go to the dead letters.
  if (!parsed.success) throw new Error(`malformed identity operation: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * A provider's merge notice: the record `externalId` of a connection was merged into its record
 * `into` there (HubSpot's merge, made by a person in HubSpot). Identity merges the two entities
 * the records stand for, as a merge asked in Syncline would, so every other system follows.
 */
export function providerMergeOf(op: string, fields: Record<string, unknown>): { into: string } | undefined {
  if (op !== 'merge' || IDENTITY_OPERATION_FIELD in fields) return undefined;
  const into = fields.mergedInto;
  return typeof into === 'string' && into.length > 0 ? { into } : undefined;
}

/**
 * The id of the merge a provider's merge notice makes: derived from the notice, so a
 * redelivery and a replay of the log name the same operation.
 */
export const providerMergeOperationId = (notice: {
  workspaceId: string;
  connectionId: string;
  eventKey: string;
}): string => uuidV5(`provider-merge:${notice.workspaceId}:${notice.connectionId}:${notice.eventKey}`);
