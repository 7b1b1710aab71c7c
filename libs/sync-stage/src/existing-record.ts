import type { EntityType } from '@syncline/core';
import { toMatchRecord } from '@syncline/identity';

/** The rule a link made from a provider's "already exists" refusal is recorded under. */
export const EXISTING_RECORD_RULE = 'provider-existing-record';

/**
 * The deterministic keys a provider also holds unique (HubSpot: a contact's address, a company's
 * domain where the portal says so): one shared with the record the provider named is as good as
 * the record itself telling us it is the entity's.
 */
const UNIQUE_KINDS: Partial<Record<EntityType, readonly string[]>> = {
  person: ['email'],
  company: ['domain'],
};

const uniqueKeys = (entityType: EntityType, fields: Record<string, unknown>): string[] => {
  const kinds = UNIQUE_KINDS[entityType] ?? [];
  return toMatchRecord(entityType, fields).keys.filter((k) => kinds.includes(k.slice(0, k.indexOf(':'))));
};

/** What becomes of a create the provider refused because `existing` already holds its unique value. */
export type ExistingRecordDecision =
  /** The record is linked to the write's entity already: the create is done. */
  | { kind: 'linked-already' }
  /** Link the record to the write's entity, for these shared keys. */
  | { kind: 'link'; evidence: string[] }
  /** The record is another entity's: the two are put up for review. */
  | { kind: 'review'; otherEntityId: string; evidence: string[] }
  /** Linked nowhere and no key agrees: left to identity, when the record's own change arrives. */
  | { kind: 'unresolved'; evidence: string[] };

/**
 * Decides on a record the provider named when it refused to create the write's entity there
 * (see ConnectorError.existing). Evidence is the keys both hold: the unique kinds above (normalised
 * by identity's own rules) and our entity id, where the record carries it (`syncline_id`: a record
 * an earlier create of this entity made).
 *
 * | the record is linked to | a key agrees | decision        |
 * |-------------------------|--------------|-----------------|
 * | the write's entity      | either       | linked-already  |
 * | another entity          | either       | review the pair |
 * | nothing                 | yes          | link            |
 * | nothing                 | no           | unresolved      |
 */
export function judgeExistingRecord(
  write: { entityId: string; entityType: EntityType; fields: Record<string, unknown> },
  existing: { fields?: Record<string, unknown> | undefined; origin?: Record<string, unknown> | undefined },
  linkedTo: string | undefined,
): ExistingRecordDecision {
  const ours = uniqueKeys(write.entityType, write.fields);
  const theirs = new Set(uniqueKeys(write.entityType, existing.fields ?? {}));
  const shared = ours.filter((k) => theirs.has(k));
  const tagged = existing.origin?.synclineId ?? existing.origin?.synclineEntityId;
  if (typeof tagged === 'string' && tagged.toLowerCase() === write.entityId.toLowerCase())
    shared.push(`syncline_id:${write.entityId}`);
  if (linkedTo === write.entityId) return { kind: 'linked-already' };
  const refused = ['provider-refused-create', ...(shared.length > 0 ? shared : ours)];
  if (linkedTo !== undefined) return { kind: 'review', otherEntityId: linkedTo, evidence: refused };
  return shared.length > 0 ? { kind: 'link', evidence: shared } : { kind: 'unresolved', evidence: refused };
}
