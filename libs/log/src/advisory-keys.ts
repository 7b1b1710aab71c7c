import { createHash } from 'node:crypto';

/**
 * Advisory lock keys of a consumer group: (group key, partition) leases a partition; the
 * shared lock (group key, MEMBERSHIP) marks a live member, so members can count each other.
 */
export const MEMBERSHIP = -1;

export function groupLockKey(group: string): number {
  return createHash('md5').update(`syncline-log-group\u0000${group}`).digest().readInt32BE(0);
}

/** pg_locks shows the two int4 keys as unsigned oids. */
export const asOid = (key: number): number => key >>> 0;
