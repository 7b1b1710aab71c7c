// The public surface: our own types and classes only (no Automerge or Prisma types).
export type { ApplyResult, DocumentStats, SyncedState } from './entity-document';
export { conflictId, EntityDocument } from './entity-document';
export type { ConflictDecision, EntityRef, MergeEngineOptions, MergeEngineStats } from './merge-engine';
export { MergeEngine } from './merge-engine';
export type { ConflictResolution, MergeStore, StoredConflict, StoredDocument } from './merge-store';
export { InMemoryMergeStore } from './merge-store';
export { PgMergeStore, type SqlTransaction } from './pg-merge-store';
export * from './types';
