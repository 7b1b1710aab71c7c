import { createHash } from 'node:crypto';

/**
 * The partition of a source record: a stable hash of (connection, entity type, external id),
 * so every change to one source record lands in one partition and keeps its order.
 */
export function partitionFor(
  connectionId: string,
  entityType: string,
  externalId: string,
  partitionCount: number,
): number {
  const digest = createHash('md5').update(`${connectionId}\u0000${entityType}\u0000${externalId}`).digest();
  return digest.readUInt32BE(0) % partitionCount;
}
