/**
 * The partition of a workspace's changes: a stable hash of its id, so every change of one
 * workspace lands in one partition, in the order it was appended.
 *
 * A workspace is the unit of order because identity is decided across its records: which
 * record makes an entity (and so its id), which merge a record meets first, whose write a
 * receipt settles. Records of one workspace in several partitions would let the order the
 * consumer met the partitions decide those, and a fold of the same log from zero in another
 * order would decide them differently; in one partition the log's order is the only order, and
 * replaying it rebuilds the same state. Workspaces spread over the partitions, and the
 * partitions over the consumer group's members.
 *
 * The hash is 32-bit FNV-1a over the UTF-16 code units of the id (a uuid, so its ASCII
 * bytes); `syncline_log_partition(text, int)` in the database computes the same (migration
 * 20261214000000_log_by_workspace, which moved the log from the earlier per-record key). It is
 * part of the log's format: changing it would move workspaces between partitions and break
 * their order, so it never changes for an existing log.
 */
export function partitionFor(workspaceId: string, partitionCount: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < workspaceId.length; i++) {
    hash ^= workspaceId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitionCount;
}
