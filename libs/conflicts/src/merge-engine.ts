import {
  type AbsorbInput,
  type ApplyResult,
  EntityDocument,
  type RetractInput,
  type SplitOffInput,
} from './entity-document';
import { Lru } from './lru';
import type { MergeStore, StoredDocument } from './merge-store';
import type { EntityState, HistoryEntry, InboundChange, MergeOutcome, PolicyMap } from './types';

export interface MergeEngineOptions {
  /** Hot documents kept in memory (count cap). */
  cacheSize?: number;
  /**
   * Byte budget of the cache, summed over each cached document's estimated memory
   * (`EntityDocument.memoryBytes`); the least recently used are evicted (and freed) past it.
   */
  cacheBytes?: number;
  /** Uncompacted chunk bytes past which a document is due for compaction. */
  compactAfterBytes?: number;
  /** Uncompacted chunks past which a document is due for compaction (a load then reads one snapshot). */
  compactAfterChunks?: number;
  /**
   * How long field policies read from the store are reused (default 5 s). The policies in
   * force change only where a `policy` event is folded (replacePolicies); a consumer of the
   * log calls invalidatePolicies when another process may have folded one since (the sync
   * stage: a batch that does not follow the last one it folded on a partition). 0 reads them
   * for every change.
   */
  policyTtlMs?: number;
}

export interface MergeEngineStats {
  merged: number;
  /** Inbound changes whose values equalled what the source had seen: no merge ran. */
  unchanged: number;
  duplicates: number;
  cacheHits: number;
  cacheMisses: number;
  compactions: number;
  evictions: number;
}

interface Entry {
  doc: EntityDocument;
  workspaceId: string;
  lastSeq: number;
  chunkBytes: number;
  chunkCount: number;
}

/** What a cached document weighs against `cacheBytes`: its memory, not its stored size. */
const entryBytes = (entry: Entry): number => entry.doc.memoryBytes();

export interface EntityRef {
  entityId: string;
  workspaceId: string;
  entityType: string;
}

export interface ConflictDecision extends EntityRef {
  conflictId: string;
  field: string;
  value: unknown;
  userId: string;
  at: Date;
  /** The log event key of the user's decision (a resolution is itself a change). */
  eventKey: string;
}

/**
 * Merges inbound changes into entity documents: an LRU of hot documents over a MergeStore,
 * persisting each change as an incremental chunk and compacting past a size threshold.
 * Every method takes the store to use, so a log consumer passes one bound to its
 * transaction. If that transaction rolls back, call `forget` for the entities it touched.
 * One engine must be the only writer of an entity (the log's partitioning provides that).
 */
export class MergeEngine {
  readonly stats: MergeEngineStats = {
    merged: 0,
    unchanged: 0,
    duplicates: 0,
    cacheHits: 0,
    cacheMisses: 0,
    compactions: 0,
    evictions: 0,
  };
  private readonly cache: Lru<string, Entry>;
  private readonly compactAfterBytes: number;
  private readonly compactAfterChunks: number;
  private readonly due = new Set<string>();
  private readonly policyCache = new Map<string, { at: number; policies: PolicyMap }>();
  private readonly policyTtlMs: number;

  constructor(
    private readonly defaultStore: MergeStore,
    options: MergeEngineOptions = {},
  ) {
    // Evicted documents are freed: Automerge's WebAssembly memory never shrinks, so only
    // freed documents let it be reused instead of growing.
    this.cache = new Lru(
      options.cacheSize ?? 2000,
      (_id, entry) => {
        this.stats.evictions++;
        entry.doc.free();
      },
      options.cacheBytes ?? 64 * 1024 * 1024,
    );
    this.compactAfterBytes = options.compactAfterBytes ?? 32 * 1024;
    this.compactAfterChunks = options.compactAfterChunks ?? 64;
    this.policyTtlMs = options.policyTtlMs ?? 5_000;
  }

  async applyInbound(change: InboundChange, store = this.defaultStore): Promise<MergeOutcome> {
    const policies = await this.policies(change.workspaceId, change.entityType, store);
    const entry = await this.entry(change.entityId, change.workspaceId, store);
    const before = { ...entry.doc.stats };
    const result = entry.doc.applyInbound(change, policies);
    if (entry.doc.repaired) {
      // Changes that could never apply were dropped: a snapshot replaces the stored chunks.
      entry.doc.repaired = false;
      this.due.add(change.entityId);
    }
    this.stats.merged += entry.doc.stats.merged - before.merged;
    this.stats.unchanged += entry.doc.stats.unchanged - before.unchanged;
    this.stats.duplicates += entry.doc.stats.duplicates - before.duplicates;
    if (result.chunk !== null) {
      const seq = ++entry.lastSeq;
      await store.appendChange(change.entityId, change.workspaceId, seq, result.chunk);
      entry.chunkBytes += result.chunk.length;
      entry.chunkCount++;
      if (this.isDue(entry)) this.due.add(change.entityId);
      this.cache.reweigh(change.entityId, entryBytes(entry));
    }
    for (const [connectionId, state] of result.synced)
      await store.saveSynced(change.entityId, connectionId, state);
    if (result.outcome.conflicts.length > 0) await store.recordConflicts(result.outcome.conflicts);
    return result.outcome;
  }

  /**
   * The connection has been written (or echoed) the entity as of `heads` (default: now).
   * False when the document does not hold those heads (nothing moves).
   */
  async markSeen(
    entityId: string,
    workspaceId: string,
    connectionId: string,
    heads?: readonly string[],
    store = this.defaultStore,
  ): Promise<boolean> {
    const entry = await this.entry(entityId, workspaceId, store);
    const state = entry.doc.markSeen(connectionId, heads);
    if (state === null) return false;
    await store.saveSynced(entityId, connectionId, state);
    return true;
  }

  /** See EntityDocument.catchUp: connections in step with the current values are marked as having seen them. */
  async catchUp(ref: EntityRef, store = this.defaultStore): Promise<number> {
    const entry = await this.entry(ref.entityId, ref.workspaceId, store);
    const moved = entry.doc.catchUp(await this.policies(ref.workspaceId, ref.entityType, store));
    for (const [connectionId, state] of moved) await store.saveSynced(ref.entityId, connectionId, state);
    return moved.size;
  }

  /** A person settles a conflict: written as that user's change, and the conflict marked resolved. */
  async resolveConflict(decision: ConflictDecision, store = this.defaultStore): Promise<MergeOutcome> {
    const outcome = await this.applyInbound(
      {
        entityId: decision.entityId,
        workspaceId: decision.workspaceId,
        entityType: decision.entityType,
        source: { kind: 'user', id: decision.userId },
        eventKey: decision.eventKey,
        eventTime: decision.at,
        fields: { [decision.field]: decision.value },
      },
      store,
    );
    await store.resolveConflict(decision.conflictId, {
      value: decision.value,
      userId: decision.userId,
      at: decision.at,
    });
    return outcome;
  }

  async outcome(ref: EntityRef, store = this.defaultStore): Promise<MergeOutcome> {
    const entry = await this.entry(ref.entityId, ref.workspaceId, store);
    return entry.doc.outcome(await this.policies(ref.workspaceId, ref.entityType, store));
  }

  async valueAt(
    ref: EntityRef,
    at: readonly string[] | Date,
    store = this.defaultStore,
  ): Promise<EntityState> {
    const entry = await this.entry(ref.entityId, ref.workspaceId, store);
    return entry.doc.valueAt(at, await this.policies(ref.workspaceId, ref.entityType, store));
  }

  async history(entityId: string, workspaceId: string, store = this.defaultStore): Promise<HistoryEntry[]> {
    return (await this.entry(entityId, workspaceId, store)).doc.history();
  }

  async historyDigest(entityId: string, workspaceId: string, store = this.defaultStore): Promise<string> {
    return (await this.entry(entityId, workspaceId, store)).doc.historyDigest();
  }

  /** Compacts documents past the size threshold; run from a background loop. */
  async compactDue(store = this.defaultStore): Promise<number> {
    let done = 0;
    for (const entityId of [...this.due]) {
      this.due.delete(entityId);
      const entry = this.cache.get(entityId);
      if (entry === undefined) continue;
      await this.compactEntry(entityId, entry, store);
      done++;
    }
    return done;
  }

  /**
   * Compacts one cached document if it is past the threshold, through `store`: a log
   * consumer calls it in its transaction for the entities it holds, so a snapshot never
   * contains a change that a rollback later removes.
   */
  async compactIfDue(entityId: string, store = this.defaultStore): Promise<boolean> {
    if (!this.due.has(entityId)) return false;
    const entry = this.cache.get(entityId);
    this.due.delete(entityId);
    if (entry === undefined) return false;
    await this.compactEntry(entityId, entry, store);
    return true;
  }

  async compact(entityId: string, workspaceId: string, store = this.defaultStore): Promise<void> {
    await this.compactEntry(entityId, await this.entry(entityId, workspaceId, store), store);
  }

  private async compactEntry(entityId: string, entry: Entry, store: MergeStore): Promise<void> {
    const snapshot = entry.doc.save();
    await store.compact(entityId, entry.workspaceId, snapshot, entry.lastSeq);
    entry.chunkBytes = 0;
    entry.chunkCount = 0;
    this.cache.reweigh(entityId, entryBytes(entry));
    this.due.delete(entityId);
    this.stats.compactions++;
  }

  /** Heads of the cached copy of a document, if one is cached (no load, no recency bump). */
  /** See EntityDocument.keepWritten: a cached document keeps the fields at heads written out. */
  keepWritten(entityId: string, connectionId: string, heads: readonly string[]): void {
    this.cache.peek(entityId)?.doc.keepWritten(connectionId, heads);
  }

  cachedHeads(entityId: string): string[] | undefined {
    return this.cache.peek(entityId)?.doc.getHeads();
  }

  /**
   * Loads the documents of these entities that are not cached, in a few statements where the
   * store can (a batch's entities, before it touches them one by one). Entities without a
   * stored document are left for their first use to create.
   */
  async prefetch(entityIds: readonly string[], store: MergeStore): Promise<void> {
    if (store.loadMany === undefined) return;
    const missing = entityIds.filter((id) => this.cache.peek(id) === undefined);
    if (missing.length < 2) return;
    const stored = await store.loadMany(missing);
    for (const [entityId, document] of stored) {
      this.stats.cacheMisses++;
      this.remember(entityId, entryOf(entityId, document));
    }
  }

  /** Drops cached state (after a rolled-back transaction, or to test reloads). */
  forget(entityId?: string): void {
    if (entityId === undefined) {
      this.cache.clear();
      this.due.clear();
    } else {
      this.cache.delete(entityId);
      this.due.delete(entityId);
    }
  }

  /** Policies are cached for `policyTtlMs`; call after changing them to apply them at once. */
  invalidatePolicies(): void {
    this.policyCache.clear();
  }

  /** Puts a type's set in force (the fold of a `policy` event): the changes after it are merged under it. */
  async replacePolicies(
    workspaceId: string,
    entityType: string,
    policies: PolicyMap,
    version: number,
    store: MergeStore = this.defaultStore,
  ): Promise<void> {
    await store.replacePolicies(workspaceId, entityType, policies, version);
    this.policyCache.set(`${workspaceId}:${entityType}`, { at: Date.now(), policies });
  }

  /**
   * A merge of entities: `survivor`'s document takes in `absorbed`'s (see
   * EntityDocument.absorb). The absorbed document is left as it was, for an unmerge.
   */
  async absorb(
    survivor: EntityRef,
    absorbed: EntityRef,
    input: AbsorbInput,
    store = this.defaultStore,
  ): Promise<MergeOutcome> {
    const policies = await this.policies(survivor.workspaceId, survivor.entityType, store);
    const from = await this.entry(absorbed.entityId, absorbed.workspaceId, store);
    const entry = await this.entry(survivor.entityId, survivor.workspaceId, store);
    return this.persist(survivor.entityId, entry, entry.doc.absorb(from.doc, input, policies), store);
  }

  /** An undone merge on the survivor's side: what it took in is given back (see EntityDocument.retract). */
  async retract(
    ref: EntityRef,
    input: Omit<RetractInput, 'workspaceId'>,
    store = this.defaultStore,
  ): Promise<MergeOutcome> {
    const policies = await this.policies(ref.workspaceId, ref.entityType, store);
    const entry = await this.entry(ref.entityId, ref.workspaceId, store);
    const result = entry.doc.retract({ ...input, workspaceId: ref.workspaceId }, policies);
    return this.persist(ref.entityId, entry, result, store);
  }

  /**
   * An undone merge on the split-off side: `ref` takes its connections back from `survivor`
   * (see EntityDocument.splitOff).
   */
  async splitOff(
    ref: EntityRef,
    survivor: EntityRef,
    input: Omit<SplitOffInput, 'workspaceId' | 'entityType'>,
    store = this.defaultStore,
  ): Promise<MergeOutcome> {
    const policies = await this.policies(ref.workspaceId, ref.entityType, store);
    const from = await this.entry(survivor.entityId, survivor.workspaceId, store);
    const entry = await this.entry(ref.entityId, ref.workspaceId, store);
    const result = entry.doc.splitOff(
      from.doc,
      { ...input, workspaceId: ref.workspaceId, entityType: ref.entityType },
      policies,
    );
    return this.persist(ref.entityId, entry, result, store);
  }

  /** Ids of the conflicts standing in the entity's document now (see EntityDocument.standingConflictIds). */
  async standingConflictIds(ref: EntityRef, store = this.defaultStore): Promise<string[]> {
    return (await this.entry(ref.entityId, ref.workspaceId, store)).doc.standingConflictIds();
  }

  /** Stores what a document method wrote: its chunk, the synced state that moved, its conflicts. */
  private async persist(
    entityId: string,
    entry: Entry,
    result: ApplyResult,
    store: MergeStore,
  ): Promise<MergeOutcome> {
    if (result.chunk !== null) {
      const seq = ++entry.lastSeq;
      await store.appendChange(entityId, entry.workspaceId, seq, result.chunk);
      entry.chunkBytes += result.chunk.length;
      entry.chunkCount++;
      if (this.isDue(entry)) this.due.add(entityId);
      this.cache.reweigh(entityId, entryBytes(entry));
    }
    for (const [connectionId, state] of result.synced) await store.saveSynced(entityId, connectionId, state);
    if (result.outcome.conflicts.length > 0) await store.recordConflicts(result.outcome.conflicts);
    return result.outcome;
  }

  private async policies(workspaceId: string, entityType: string, store: MergeStore): Promise<PolicyMap> {
    const key = `${workspaceId}:${entityType}`;
    const cached = this.policyCache.get(key);
    if (cached !== undefined && Date.now() - cached.at < this.policyTtlMs) return cached.policies;
    const policies = await store.policies(workspaceId, entityType);
    this.policyCache.set(key, { at: Date.now(), policies });
    return policies;
  }

  private async entry(entityId: string, workspaceId: string, store: MergeStore): Promise<Entry> {
    const cached = this.cache.get(entityId);
    if (cached !== undefined) {
      this.stats.cacheHits++;
      return cached;
    }
    this.stats.cacheMisses++;
    const stored = await store.load(entityId);
    const entry: Entry =
      stored === null
        ? {
            doc: EntityDocument.create(entityId),
            workspaceId,
            lastSeq: 0,
            chunkBytes: 0,
            chunkCount: 0,
          }
        : entryOf(entityId, stored);
    return this.remember(entityId, entry);
  }

  private remember(entityId: string, entry: Entry): Entry {
    if (this.isDue(entry) || entry.doc.repaired) this.due.add(entityId);
    entry.doc.repaired = false;
    this.cache.set(entityId, entry, entryBytes(entry));
    return entry;
  }

  private isDue(entry: Entry): boolean {
    return entry.chunkBytes > this.compactAfterBytes || entry.chunkCount > this.compactAfterChunks;
  }

  /** Documents cached now, and the bytes they count against `cacheBytes`. */
  get cached(): { documents: number; bytes: number } {
    return { documents: this.cache.size, bytes: this.cache.weight };
  }
}

/** A cache entry of a stored document. */
function entryOf(entityId: string, stored: StoredDocument): Entry {
  return {
    doc: EntityDocument.load(entityId, stored.snapshot, stored.chunks, stored.synced),
    workspaceId: stored.workspaceId,
    lastSeq: stored.lastSeq,
    chunkBytes: stored.chunkBytes,
    chunkCount: stored.chunks.length,
  };
}
