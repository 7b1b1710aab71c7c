import { createHash } from 'node:crypto';

// Fixed namespace for identity ids (a random v4, chosen once).
const NAMESPACE = Buffer.from('6f1d3c2a9b7e4f0a8c5d2e1f0a9b8c7d', 'hex');

/** RFC 4122 version-5 UUID of a name: the same input always gives the same id. */
export function uuidV5(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id of the entity a source record creates. Derived from the record, so a replay of the
 * log from offset 0 creates the same entities and merge operations naming them still apply.
 */
export const entityIdFor = (
  workspaceId: string,
  connectionId: string,
  entityType: string,
  externalId: string,
) => uuidV5(`entity:${workspaceId}:${connectionId}:${entityType}:${externalId}`);

/** One review row per pair of entities, whichever side was seen first. */
export const possibleDuplicateIdFor = (a: string, b: string) =>
  uuidV5(`possible-duplicate:${a < b ? `${a}:${b}` : `${b}:${a}`}`);

/**
 * The merge identity makes when a record's keys name two entities: one per pair, so a redelivery
 * or a replay makes the same operation, and a join a person has undone is not made again.
 */
export const joinOperationIdFor = (survivorId: string, absorbedId: string) =>
  uuidV5(`identity-join:${survivorId}:${absorbedId}`);
