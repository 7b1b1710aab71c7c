/**
 * The partition of a source record: a stable hash of (connection, entity type, external id),
 * so every change to one source record lands in one partition and keeps its order.
 *
 * The hash is 32-bit FNV-1a over the UTF-16 code units of the three parts joined by NUL.
 * It is part of the log's format: changing it would move records between partitions and
 * break their order, so it never changes for an existing log.
 */
export function partitionFor(
  connectionId: string,
  entityType: string,
  externalId: string,
  partitionCount: number,
): number {
  let hash = 0x811c9dc5;
  hash = fnv1a(hash, connectionId);
  hash = Math.imul(hash ^ 0, 0x01000193);
  hash = fnv1a(hash, entityType);
  hash = Math.imul(hash ^ 0, 0x01000193);
  hash = fnv1a(hash, externalId);
  return (hash >>> 0) % partitionCount;
}

function fnv1a(seed: number, text: string): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash;
}
