/** The consumer group of the sync stage (identity, merge, outbox). */
export const SYNC_GROUP = 'sync';
