// The public surface: our own types and classes only (no Automerge or Prisma types).
export type {
  AbsorbInput,
  ApplyResult,
  DocumentStats,
  RetractInput,
  SplitOffInput,
  SyncedState,
} from './entity-document';
export { conflictId, EntityDocument } from './entity-document';
export { type EntityReader, newestFirst, readEntity } from './entity-reader';
export type { ConflictDecision, EntityRef, MergeEngineOptions, MergeEngineStats } from './merge-engine';
export { MergeEngine } from './merge-engine';
export type { ConflictResolution, MergeStore, StoredConflict, StoredDocument } from './merge-store';
export { InMemoryMergeStore } from './merge-store';
export { PgMergeStore, type PgMergeStoreOptions } from './pg-merge-store';
export {
  POLICY_EXTERNAL_ID,
  type PolicyChange,
  policyChangeInput,
  policyChangeOf,
  policyEventKey,
  UnreadablePolicyEvent,
} from './policy-event';
export * from './types';
