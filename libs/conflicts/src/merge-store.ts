import type { SyncedState } from './entity-document';
import type { ConflictRecord, FieldPolicy, PolicyMap } from './types';

export interface StoredDocument {
  workspaceId: string;
  /** Compacted snapshot; null before the first compaction. */
  snapshot: Uint8Array | null;
  /** Incremental chunks saved after the snapshot, in order. */
  chunks: Uint8Array[];
  /** Sequence number of the last chunk (0 when none was ever appended). */
  lastSeq: number;
  /** Bytes of the chunks not yet compacted. */
  chunkBytes: number;
  synced: Map<string, SyncedState>;
}

export interface ConflictResolution {
  value: unknown;
  userId: string;
  at: Date;
}

/**
 * Where documents, synced heads, conflicts and policies live. Every adapter passes the
 * same acceptance suite (merge-store.acceptance.ts).
 */
export interface MergeStore {
  load(entityId: string): Promise<StoredDocument | null>;
  /** Several documents in a few statements (a store without it is read one `load` at a time). */
  loadMany?(entityIds: readonly string[]): Promise<Map<string, StoredDocument>>;
  /** Appends one incremental chunk; `seq` is the previous last seq + 1. */
  appendChange(entityId: string, workspaceId: string, seq: number, chunk: Uint8Array): Promise<void>;
  /** Replaces the snapshot and drops the chunks it contains (seq ≤ throughSeq). */
  compact(entityId: string, workspaceId: string, snapshot: Uint8Array, throughSeq: number): Promise<void>;
  saveSynced(entityId: string, connectionId: string, state: SyncedState): Promise<void>;
  /** Idempotent by conflict id: a replay records each conflict once. */
  recordConflicts(conflicts: readonly ConflictRecord[]): Promise<void>;
  resolveConflict(conflictId: string, resolution: ConflictResolution): Promise<void>;
  listConflicts(entityId: string): Promise<StoredConflict[]>;
  /** The policies in force for the type (fields left out: lww). */
  policies(workspaceId: string, entityType: string): Promise<PolicyMap>;
  /** Puts a type's whole set in force (the fold of a `policy` event of the log). */
  replacePolicies(
    workspaceId: string,
    entityType: string,
    policies: PolicyMap,
    version: number,
  ): Promise<void>;
  /** One field's policy put in force at once: for tests of the merge alone. */
  setPolicy(workspaceId: string, entityType: string, field: string, policy: FieldPolicy): Promise<void>;
}

export interface StoredConflict extends ConflictRecord {
  resolution?: ConflictResolution;
}

/** For unit and property tests and the bench. */
export class InMemoryMergeStore implements MergeStore {
  readonly documents = new Map<
    string,
    {
      workspaceId: string;
      snapshot: Uint8Array | null;
      chunks: { seq: number; chunk: Uint8Array }[];
      lastSeq: number;
    }
  >();
  private readonly synced = new Map<string, Map<string, SyncedState>>();
  private readonly conflicts = new Map<string, StoredConflict>();
  private readonly policyRows = new Map<string, Record<string, FieldPolicy>>();

  async load(entityId: string): Promise<StoredDocument | null> {
    const doc = this.documents.get(entityId);
    if (doc === undefined) return null;
    return {
      workspaceId: doc.workspaceId,
      snapshot: doc.snapshot,
      chunks: doc.chunks.map((c) => c.chunk),
      lastSeq: doc.lastSeq,
      chunkBytes: doc.chunks.reduce((n, c) => n + c.chunk.length, 0),
      synced: new Map(this.synced.get(entityId) ?? []),
    };
  }

  async appendChange(entityId: string, workspaceId: string, seq: number, chunk: Uint8Array): Promise<void> {
    let doc = this.documents.get(entityId);
    if (doc === undefined) {
      doc = { workspaceId, snapshot: null, chunks: [], lastSeq: 0 };
      this.documents.set(entityId, doc);
    }
    if (seq !== doc.lastSeq + 1) throw new Error(`entity ${entityId}: chunk ${seq} after ${doc.lastSeq}`);
    doc.chunks.push({ seq, chunk });
    doc.lastSeq = seq;
  }

  async compact(
    entityId: string,
    workspaceId: string,
    snapshot: Uint8Array,
    throughSeq: number,
  ): Promise<void> {
    const doc = this.documents.get(entityId) ?? {
      workspaceId,
      snapshot: null,
      chunks: [],
      lastSeq: throughSeq,
    };
    doc.snapshot = snapshot;
    doc.chunks = doc.chunks.filter((c) => c.seq > throughSeq);
    this.documents.set(entityId, doc);
  }

  async saveSynced(entityId: string, connectionId: string, state: SyncedState): Promise<void> {
    let byConnection = this.synced.get(entityId);
    if (byConnection === undefined) {
      byConnection = new Map();
      this.synced.set(entityId, byConnection);
    }
    byConnection.set(connectionId, { heads: [...state.heads], stale: { ...state.stale } });
  }

  async recordConflicts(conflicts: readonly ConflictRecord[]): Promise<void> {
    for (const conflict of conflicts)
      if (!this.conflicts.has(conflict.id)) this.conflicts.set(conflict.id, conflict);
  }

  async resolveConflict(conflictId: string, resolution: ConflictResolution): Promise<void> {
    const conflict = this.conflicts.get(conflictId);
    if (conflict === undefined) throw new Error(`no conflict ${conflictId}`);
    this.conflicts.set(conflictId, { ...conflict, status: 'resolved', resolution });
  }

  async listConflicts(entityId: string): Promise<StoredConflict[]> {
    return [...this.conflicts.values()].filter((c) => c.entityId === entityId);
  }

  async policies(workspaceId: string, entityType: string): Promise<PolicyMap> {
    return { ...(this.policyRows.get(`${workspaceId}:${entityType}`) ?? {}) };
  }

  async replacePolicies(workspaceId: string, entityType: string, policies: PolicyMap): Promise<void> {
    this.policyRows.set(`${workspaceId}:${entityType}`, { ...policies });
  }

  async setPolicy(
    workspaceId: string,
    entityType: string,
    field: string,
    policy: FieldPolicy,
  ): Promise<void> {
    const key = `${workspaceId}:${entityType}`;
    this.policyRows.set(key, { ...(this.policyRows.get(key) ?? {}), [field]: policy });
  }
}
