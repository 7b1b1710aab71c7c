import { createHash } from 'node:crypto';
import * as Automerge from '@automerge/automerge';
import { canonicalJson } from '@syncline/core';
import { actorOf, copyActorOf, sourceKey, sourceOfActor } from './actor';
import { decodeFieldValue, encodeFieldValue, hlcMillis, hlcOf } from './field-value';
import { type Candidate, policyFor, type Resolution, resolveField } from './merge.policy';
import type {
  ConflictCandidate,
  ConflictRecord,
  EntityState,
  FieldPolicy,
  HistoryEntry,
  InboundChange,
  MergeOutcome,
  PolicyMap,
  SourceRef,
} from './types';

// Automerge stays inside this file: the rest of the library sees bytes, heads (hex
// strings) and our own types.
type Handle = ReturnType<typeof Automerge.getBackend>;
type EncodableOp = Parameters<typeof Automerge.encodeChange>[0]['ops'][number];

/** What a connection last saw, as persisted: its heads, and fields it holds a late value of. */
export interface SyncedState {
  heads: string[];
  /** field → canonical JSON of the late value the connection still holds. */
  stale: Record<string, string>;
}

export interface ApplyResult {
  outcome: MergeOutcome;
  /** Incremental save holding the new change; null when no change was written. */
  chunk: Uint8Array | null;
  /** Connections whose synced state moved, to persist. */
  synced: Map<string, SyncedState>;
}

export interface DocumentStats {
  /** Changes that went through Automerge. */
  merged: number;
  /** Changes whose every value equalled what the source had seen: a compare, no merge. */
  unchanged: number;
  duplicates: number;
}

/** A merge of entities as the survivor's document takes it in (see `absorb`). */
export interface AbsorbInput {
  /** The merge operation: the copied changes carry it, so a second delivery is a duplicate. */
  operationId: string;
  workspaceId: string;
  at: Date;
  /**
   * Connections whose records moved here from the absorbed entity and that carry no other
   * record of this one: they hold what they held of the absorbed entity.
   */
  connections: readonly string[];
}

/** An undone merge, as the survivor's document gives back what it took in (see `retract`). */
export interface RetractInput {
  /** The merge being undone. */
  mergeOperationId: string;
  /** The unmerge operation. */
  operationId: string;
  workspaceId: string;
  /** Who undid it: fields only the absorbed entity had are cleared in their name. */
  by: SourceRef;
  at: Date;
}

/** An undone merge, as the split-off entity's document takes its connections back (see `splitOff`). */
export interface SplitOffInput {
  operationId: string;
  workspaceId: string;
  entityType: string;
  /** Connections whose records come back here and that carry no record of the survivor any more. */
  connections: readonly string[];
  by: SourceRef;
  at: Date;
}

/** A connection's view of the document: the document at its synced heads, materialised. */
interface View {
  heads: string[];
  maxOp: number;
  fields: Map<string, Candidate[]>;
  stale: Map<string, string>;
}

const ROOT = '_root';
/** How many recent heads a document keeps the fields of (see `recent`). */
const RECENT_VIEWS = 4;
/** At most how many heads written out a document keeps the fields of (see `written`). */
const WRITTEN_VIEWS = 32;
const headsKey = (heads: readonly string[]): string => [...heads].sort().join(',');

/** The fields at some heads, as they were when the document had them (see `recent`). */
interface RecentView {
  maxOp: number;
  /** How many changes the document held then: every one of them is an ancestor of those heads. */
  changes: number;
  fields: Map<string, Candidate[]>;
}
const emptyView = (): View => ({ heads: [], maxOp: 0, fields: new Map(), stale: new Map() });

/**
 * One canonical entity's Automerge document with the per-connection synced heads. Pure and
 * synchronous: bytes in, bytes out; persistence and caching are the engine's business.
 *
 * An inbound change from connection C is written at C's synced heads, with C as actor,
 * so Automerge records exactly which edits C had not seen: two edits of one field that did
 * not see each other both stay (a conflict, settled by the field's policy when read); an
 * edit made after seeing the other replaces it. Changes are encoded directly (actor, seq,
 * deps, start op and time all derived from the input), so replaying the same log builds
 * byte-identical changes with the same hashes.
 */
export class EntityDocument {
  readonly stats: DocumentStats = { merged: 0, unchanged: 0, duplicates: 0 };
  private heads: string[];
  private maxOp = 0;
  private readonly current = new Map<string, Candidate[]>();
  private readonly views = new Map<string, View>();
  private readonly seqByActor = new Map<string, number>();
  /** Hash of each actor's latest change. */
  private readonly lastByActor = new Map<string, string>();
  /** How many changes the document held once each actor's latest change was in (see `recent`). */
  private readonly lastAtCount = new Map<string, number>();
  /**
   * The fields at the heads each of the latest few merges left, newest last. Those are the
   * heads writes are made at, so a write receipt's view (`markSeen`) is read here instead of
   * through Automerge, which would first have to apply every deferred change. `changes` is
   * how many changes the document held then: every one of them is an ancestor of those heads.
   */
  private readonly recent = new Map<string, RecentView>();
  /**
   * The fields at heads written out to connections (`keepWritten`), oldest first, with the
   * connections whose receipt is still to come. A write's receipt comes back through the log
   * after whatever was folded meanwhile: behind a backlog, many merges later, when its heads
   * have left `recent`. Read there, a receipt costs an Automerge read at past heads, which
   * first applies every deferred change. A connection's receipt lets go of its older heads
   * too: one pusher per connection sends an entity's writes in the order they were queued and
   * logs their receipts in that order, so an older write still waiting was set aside unsent.
   */
  private readonly written = new Map<string, RecentView & { owed: Set<string> }>();
  private readonly eventKeys = new Set<string>();
  private readonly resolutions = new WeakMap<
    readonly Candidate[],
    { policy: FieldPolicy; res: Resolution }
  >();
  private readonly parsed = new Map<string, { json: string; value: unknown }>();
  private readonly sources = new Map<string, SourceRef>();

  /** Set when the document dropped changes it could never apply (see `repair`): persist a snapshot. */
  repaired = false;
  /** Changes the document was loaded with, and changes applied to it since. */
  private loadedChanges = 0;
  private appliedChanges = 0;

  /**
   * Changes merged but not yet given to Automerge (see `defer`), oldest first. The hot path
   * keeps its own copy of what a change does (heads, fields, operation counters), so a
   * document can take a run of changes and apply them in one call when something needs
   * Automerge itself: a past view, a save, the history.
   */
  private deferred: Uint8Array[] = [];
  /** The deferred changes' hashes, with the last operation counter of each. */
  private readonly deferredMaxOp = new Map<string, number>();
  /** Set when deferred changes failed to apply: the document is out of step and unusable. */
  private broken: Error | undefined;

  private constructor(
    readonly entityId: string,
    private handle: Handle,
  ) {
    this.heads = handle.getHeads();
  }

  /** Automerge's document, with every deferred change applied. */
  private get backend(): Handle {
    if (this.broken !== undefined) throw this.broken;
    if (this.deferred.length === 0) return this.handle;
    const parts = this.deferred;
    this.deferred = [];
    this.deferredMaxOp.clear();
    try {
      this.handle.loadIncremental(parts.length === 1 ? parts[0]! : concatBytes(parts));
    } catch (error) {
      this.broken = new Error(`entity ${this.entityId}: deferred changes did not apply (${String(error)})`);
      throw this.broken;
    }
    const heads = this.handle.getHeads();
    if (!sameHeads(heads, this.heads)) {
      this.broken = new Error(
        `entity ${this.entityId}: deferred changes left heads ${heads.join(',')}, not ${this.heads.join(',')}`,
      );
      throw this.broken;
    }
    return this.handle;
  }

  /**
   * Takes an encoded change whose every dependency this document holds (heads it has
   * merged), without applying it yet: its hash is the SHA-256 its checksum is the start of,
   * and the heads follow from its dependencies. Loading one small change costs Automerge
   * about as much as loading twenty at once, so a hot document applies its changes when it
   * is next read through Automerge, together.
   */
  private defer(encoded: Uint8Array, deps: readonly string[], maxOp: number): string {
    const hash = changeHash(encoded);
    this.deferredMaxOp.set(hash, maxOp);
    const replaced = new Set(deps);
    this.heads = [...this.heads.filter((h) => !replaced.has(h)), hash].sort();
    this.deferred.push(encoded);
    this.appliedChanges++;
    return hash;
  }

  static create(entityId: string): EntityDocument {
    return new EntityDocument(entityId, Automerge.getBackend(Automerge.init({ actor: '00' })));
  }

  /** From a compacted snapshot (or none) plus the incremental chunks saved after it. */
  static load(
    entityId: string,
    snapshot: Uint8Array | null,
    chunks: readonly Uint8Array[],
    synced: ReadonlyMap<string, SyncedState> = new Map(),
  ): EntityDocument {
    // One loadIncremental of the snapshot and chunks concatenated (a sequence of chunks is
    // itself valid Automerge input): each call has a fixed cost far above its per-byte one.
    const parts = snapshot && snapshot.length > 0 ? [snapshot, ...chunks] : chunks;
    const handle = Automerge.getBackend(Automerge.init({ actor: '00' }));
    if (parts.length === 1) handle.loadIncremental(parts[0]!);
    else if (parts.length > 1) handle.loadIncremental(concatBytes(parts));
    const doc = new EntityDocument(entityId, handle);
    doc.rebuild();
    doc.repair();
    // Reading at past heads is the costly part of a load: connections synced at the current
    // heads share the current fields, and connections synced at the same heads share one read.
    const byHeads = new Map<string, Map<string, Candidate[]>>();
    for (const [connectionId, state] of synced) {
      // Heads this document does not hold (never expected; a guard) would make the
      // connection's next change wait forever for missing dependencies.
      const heads = doc.knownHeads(state.heads);
      if (heads.length === 0 && state.heads.length > 0) continue;
      const key = [...heads].sort().join(',');
      let fields = byHeads.get(key);
      if (fields === undefined) {
        fields = sameHeads(heads, doc.heads) ? doc.current : doc.viewAt(heads).fields;
        byHeads.set(key, fields);
      }
      doc.views.set(connectionId, {
        heads: [...heads],
        maxOp: doc.maxOpAt(heads),
        fields: new Map(fields),
        stale: new Map(Object.entries(state.stale)),
      });
    }
    return doc;
  }

  private rebuild(): void {
    const metas = this.backend.getChangesMeta([]);
    this.loadedChanges = metas.length;
    this.appliedChanges = 0;
    for (const meta of metas) {
      if (meta.message !== null) this.eventKeys.add(meta.message);
      if (meta.seq > (this.seqByActor.get(meta.actor) ?? 0)) {
        this.lastByActor.set(meta.actor, meta.hash);
        this.lastAtCount.set(meta.actor, metas.length);
      }
      this.seqByActor.set(meta.actor, Math.max(this.seqByActor.get(meta.actor) ?? 0, meta.seq));
      this.maxOp = Math.max(this.maxOp, meta.maxOp);
    }
    for (const key of this.backend.keys(ROOT)) this.current.set(key, this.candidates(key));
  }

  /**
   * Rebuilds the document from what it has applied, leaving out changes waiting for a
   * dependency it does not have (they can never apply, and they hold their actor's sequence
   * number). Connections' views stay: their heads are applied changes. True if anything was
   * dropped; the caller persists a fresh snapshot (`repaired`).
   */
  private repair(): boolean {
    // Nothing waiting for a dependency: the refusal has another cause.
    if (this.backend.getMissingDeps([]).length === 0) return false;
    // A save would keep the waiting changes: rebuilt from the applied ones only.
    const fresh = Automerge.getBackend(Automerge.init({ actor: '00' }));
    fresh.applyChanges(this.backend.getChanges([]));
    this.handle.free();
    this.handle = fresh;
    this.heads = fresh.getHeads();
    this.seqByActor.clear();
    this.lastByActor.clear();
    this.lastAtCount.clear();
    this.recent.clear();
    this.written.clear();
    this.eventKeys.clear();
    this.current.clear();
    this.maxOp = 0;
    this.rebuild();
    this.repaired = true;
    return true;
  }

  private viewAt(heads: readonly string[], stale: Record<string, string> = {}): View {
    const at = [...heads];
    const view: View = { heads: at, maxOp: 0, fields: new Map(), stale: new Map(Object.entries(stale)) };
    if (at.length === 0) return view;
    const recent = this.recentAt(headsKey(at));
    if (recent !== undefined) {
      view.maxOp = recent.maxOp;
      view.fields = new Map(recent.fields);
      return view;
    }
    view.maxOp = this.maxOpAt(at);
    for (const key of this.backend.keys(ROOT, at)) view.fields.set(key, this.candidates(key, at));
    return view;
  }

  private maxOpAt(heads: readonly string[]): number {
    if (sameHeads(heads, this.heads)) return this.maxOp;
    let maxOp = 0;
    for (const head of heads) maxOp = Math.max(maxOp, this.maxOpOf(head) ?? 0);
    return maxOp;
  }

  private candidates(key: string, heads?: string[]): Candidate[] {
    return this.backend.getAll(ROOT, key, heads).map(([, stored, opId]) => {
      const { hlc, json } = decodeFieldValue(String(stored));
      return { opId: String(opId), source: this.sourceOf(String(opId)), hlc, json };
    });
  }

  private sourceOf(opId: string): SourceRef {
    const actor = opId.slice(opId.indexOf('@') + 1);
    let source = this.sources.get(actor);
    if (source === undefined) {
      source = sourceOfActor(actor);
      this.sources.set(actor, source);
    }
    return source;
  }

  private resolve(candidates: readonly Candidate[], policy: FieldPolicy): Resolution {
    const cached = this.resolutions.get(candidates);
    if (cached !== undefined && cached.policy === policy) return cached.res;
    const res = resolveField(candidates, policy);
    this.resolutions.set(candidates, { policy, res });
    return res;
  }

  private valueOf(field: string, json: string): unknown {
    const cached = this.parsed.get(field);
    if (cached !== undefined && cached.json === json) return cached.value;
    const value: unknown = JSON.parse(json);
    this.parsed.set(field, { json, value });
    return value;
  }

  /**
   * Merges one inbound change. A connection's change is placed at its synced heads; a
   * user's edit at the current heads (the person saw the current view).
   */
  applyInbound(change: InboundChange, policies: PolicyMap): ApplyResult {
    if (this.eventKeys.has(change.eventKey)) {
      this.stats.duplicates++;
      return { outcome: this.outcome(policies, 'duplicate', []), chunk: null, synced: new Map() };
    }
    this.eventKeys.add(change.eventKey);
    const { source } = change;
    const isConnection = source.kind === 'connection';
    const view = isConnection ? (this.views.get(source.id) ?? this.firstView(source.id)) : this.currentView();
    const eventMs = change.eventTime.getTime();
    const ops: EncodableOp[] = [];
    const written: { field: string; candidate: Omit<Candidate, 'opId'>; pred: string[] }[] = [];
    const late: { field: string; json: string; ms: number; over: Candidate }[] = [];

    let staleMoved = false;
    if (isConnection)
      for (const [field, raw] of Object.entries(change.echo ?? {})) {
        const json = canonicalJson(raw);
        if (this.heldBy(source.id, view, field, policyFor(policies, field)) === json) continue;
        view.stale.set(field, json);
        staleMoved = true;
      }

    for (const [field, raw] of Object.entries(change.fields)) {
      const json = canonicalJson(raw);
      const policy = policyFor(policies, field);
      const visible = view.fields.get(field) ?? [];
      const held = isConnection
        ? this.heldBy(source.id, view, field, policy)
        : visible.length > 0
          ? this.resolve(visible, policy).json
          : undefined;
      // The content compare: the source reports what it already had, so nothing is written.
      if (held === json && !(source.kind === 'user' && visible.length > 1)) continue;
      // An empty value from a source that never held one is an absence, not a clear: a CRM
      // that has no phone for a person must not wipe the phone another system has.
      if (json === 'null' && held === undefined) continue;
      const fieldTime = change.fieldTimes?.[field];
      const ms = fieldTime === undefined ? eventMs : new Date(fieldTime).getTime();
      // A read of the source's own past (a full record read before a property changed, on
      // the log after that change's notification): the source has since reported a later
      // value of this field itself, and that is what it holds. The older value neither
      // merges nor marks the source as holding it (which would owe the source its own edit).
      if (isConnection && visible.some((c) => sameSource(c.source, source) && hlcMillis(c.hlc) > ms))
        continue;
      let seenHlc = -1;
      for (const c of visible) seenHlc = Math.max(seenHlc, c.hlc);
      if (policy.kind === 'lww' && seenHlc >= 0 && ms < hlcMillis(seenHlc)) {
        const over = this.resolve(visible, policy).credited;
        late.push({ field, json, ms, over });
        continue;
      }
      // Hybrid logical clock: never behind what the source had seen.
      const hlc = Math.max(hlcOf(ms), seenHlc + 1);
      const pred = visible.map((c) => c.opId);
      ops.push({
        action: 'set',
        obj: ROOT,
        key: field,
        value: encodeFieldValue(hlc, json),
        pred,
      } as EncodableOp);
      written.push({ field, candidate: { source, hlc, json }, pred });
    }

    const synced = new Map<string, SyncedState>();
    const conflicts: ConflictRecord[] = [];
    for (const l of late) {
      conflicts.push(this.lateConflict(change, l.field, l.json, l.ms, l.over));
      view.stale.set(l.field, l.json);
    }

    let chunk: Uint8Array | null = null;
    if (ops.length === 0) {
      this.stats.unchanged++;
    } else {
      this.stats.merged++;
      const actor = actorOf(source);
      const seq = (this.seqByActor.get(actor) ?? 0) + 1;
      const startOp = view.maxOp + 1;
      const encoded = Automerge.encodeChange({
        actor,
        author: null,
        seq,
        startOp,
        time: Math.floor(eventMs / 1000),
        message: change.eventKey,
        deps: view.heads,
        ops,
      });
      // The encoded change is itself a valid incremental chunk: it is what gets persisted, and
      // what Automerge is given later (its dependencies are heads this document holds; a
      // document loaded with changes it could not apply was repaired as it loaded).
      const hash = this.defer(encoded, view.heads, startOp + ops.length - 1);
      this.seqByActor.set(actor, seq);
      this.lastByActor.set(actor, hash);
      this.lastAtCount.set(actor, this.changeCount());
      const lastOp = startOp + ops.length - 1;
      this.maxOp = Math.max(this.maxOp, lastOp);
      chunk = encoded;
      if (isConnection) {
        view.heads = [hash];
        view.maxOp = lastOp;
      }
      written.forEach(({ field, candidate, pred }, index) => {
        const added: Candidate = { ...candidate, opId: `${startOp + index}@${actor}` };
        // Map semantics: the new op replaces what it saw; values it did not see stay.
        const overwritten = new Set(pred);
        const now = [...(this.current.get(field) ?? []).filter((c) => !overwritten.has(c.opId)), added];
        this.current.set(field, now);
        if (isConnection) {
          view.fields.set(field, [added]);
          view.stale.delete(field);
        }
        // Concurrent edits that agree are not a conflict: nothing to settle, nothing to show.
        if (now.length > 1 && new Set(now.map((c) => c.json)).size > 1)
          conflicts.push(this.concurrentConflict(change, field, now, policyFor(policies, field)));
      });
    }
    if (isConnection)
      for (const [field, raw] of Object.entries(change.held ?? {})) {
        const json = canonicalJson(raw);
        if (this.heldBy(source.id, view, field, policyFor(policies, field)) === json) continue;
        view.stale.set(field, json);
        staleMoved = true;
      }
    if (isConnection) {
      const isNew = !this.views.has(source.id);
      this.views.set(source.id, view);
      if (ops.length > 0 || late.length > 0 || staleMoved || isNew)
        synced.set(source.id, this.syncedOf(view));
    }
    if (ops.length > 0) this.remember();
    return {
      outcome: this.outcome(policies, ops.length > 0 ? 'applied' : 'unchanged', conflicts),
      chunk,
      synced,
    };
  }

  /**
   * A connection has been written the current values (a write receipt, or its echo). Heads
   * this document does not hold (a receipt of another entity's write) say nothing about it:
   * null, and nothing moves.
   */
  markSeen(connectionId: string, heads?: readonly string[]): SyncedState | null {
    if (heads !== undefined && this.knownHeads(heads).length !== heads.length) return null;
    const at = heads === undefined ? undefined : this.withOwnLatest(connectionId, heads);
    const view = at === undefined || sameHeads(at, this.heads) ? this.currentView() : this.viewAt(at);
    if (heads !== undefined) this.received(connectionId, headsKey(heads));
    this.views.set(connectionId, view);
    return this.syncedOf(view);
  }

  /**
   * A source has seen its own changes: heads written to it before its latest change (a
   * receipt of an older write) are joined with that change, so its next change follows its
   * own last one (a sequence of its changes is a chain, and its operation counters never
   * repeat).
   */
  private withOwnLatest(connectionId: string, heads: readonly string[]): string[] {
    const actor = actorOf({ kind: 'connection', id: connectionId });
    const own = this.lastByActor.get(actor);
    if (own === undefined || heads.includes(own)) return [...heads];
    // Its latest change was in the document when it had these heads: an ancestor of them.
    const recent = this.recentAt(headsKey(heads));
    if (recent !== undefined && (this.lastAtCount.get(actor) ?? Number.POSITIVE_INFINITY) <= recent.changes)
      return [...heads];
    const unseen = this.backend.getChangesMeta([...heads]);
    if (!unseen.some((m) => m.hash === own)) return [...heads];
    // Heads that are ancestors of `own` are no heads of the joined set.
    const beyondOwn = new Set(this.backend.getChangesMeta([own]).map((m) => m.hash));
    return [...heads.filter((h) => beyondOwn.has(h)), own];
  }

  /**
   * The last operation counter of a change this document holds; undefined for one it does
   * not. A receipt's heads are looked up here on every write: Automerge's document answers
   * for what it has applied, so this needs no deferred change applied.
   */
  private maxOpOf(hash: string): number | undefined {
    if (this.broken !== undefined) throw this.broken;
    return this.deferredMaxOp.get(hash) ?? this.handle.getChangeMetaByHash(hash)?.maxOp;
  }

  /** The heads among these that this document holds. */
  private knownHeads(heads: readonly string[]): string[] {
    return heads.filter((h) => this.maxOpOf(h) !== undefined);
  }

  /**
   * The view of a connection with no synced heads: nothing seen, unless its own changes are
   * in the document (synced state lost), in which case it saw at least up to its latest one.
   */
  private firstView(connectionId: string): View {
    const last = this.lastByActor.get(actorOf({ kind: 'connection', id: connectionId }));
    return last === undefined ? emptyView() : this.viewAt([last]);
  }

  /**
   * Connections that hold exactly the values the entity shows (nothing owed, no manual
   * conflict open) have in effect seen the current state: their synced heads move to it, so
   * that their next edit overwrites every value it replaces, including values that lost a
   * settled conflict and would otherwise stand beside it as a new one. Returns who moved.
   */
  catchUp(policies: PolicyMap): Map<string, SyncedState> {
    const moved = new Map<string, SyncedState>();
    for (const [field, candidates] of this.current)
      if (this.resolve(candidates, policyFor(policies, field)).open) return moved;
    const { owed } = this.outcome(policies);
    for (const [connectionId, view] of this.views) {
      if ((owed.get(connectionId) ?? []).length > 0 || view.stale.size > 0) continue;
      if (sameHeads(view.heads, this.heads)) continue;
      const current = this.currentView();
      this.views.set(connectionId, current);
      moved.set(connectionId, this.syncedOf(current));
    }
    return moved;
  }

  /**
   * Takes in the document of an entity merged into this one. Every value the absorbed entity
   * holds (every candidate of a field, so an open conflict comes along) is written here as a
   * copy concurrent with everything this document has: a field only the absorbed entity had
   * is taken, one only this entity has is kept, and one both have is settled by the field's
   * policy like any concurrent edit. Copies keep their source and time (provenance, priority
   * and lww still hold); each is the change of an actor of its own (`copyActorOf`), derived
   * from the operation, so replaying the log writes the same changes. The moved connections
   * are taken to hold what they held of the absorbed entity, so each side is owed the other's
   * values.
   */
  absorb(from: EntityDocument, input: AbsorbInput, policies: PolicyMap): ApplyResult {
    const key = `merge:${input.operationId}`;
    if (this.eventKeys.has(`${key}#0`)) {
      this.stats.duplicates++;
      return { outcome: this.outcome(policies, 'duplicate', []), chunk: null, synced: new Map() };
    }
    // One change per source and rank: a change sets a field once, and a source may hold
    // several candidates of one field (copies from an earlier merge).
    const buckets = new Map<string, { source: SourceRef; ops: { field: string; candidate: Candidate }[] }>();
    for (const field of [...from.current.keys()].sort()) {
      const have = new Set((this.current.get(field) ?? []).map((c) => c.json));
      const ranks = new Map<string, number>();
      for (const candidate of [...(from.current.get(field) ?? [])].sort((a, b) =>
        a.opId < b.opId ? -1 : 1,
      )) {
        // The value is here already: nothing to settle.
        if (have.has(candidate.json)) continue;
        have.add(candidate.json);
        const source = sourceKey(candidate.source);
        const rank = ranks.get(source) ?? 0;
        ranks.set(source, rank + 1);
        const bucketKey = `${source}#${rank}`;
        const bucket = buckets.get(bucketKey) ?? { source: candidate.source, ops: [] };
        bucket.ops.push({ field, candidate });
        buckets.set(bucketKey, bucket);
      }
    }
    type Bucket = { source: SourceRef; ops: { field: string; candidate: Candidate }[] };
    // An empty marker when nothing is copied, so a second delivery is still recognised.
    const changes: [string, Bucket][] =
      buckets.size > 0
        ? [...buckets].sort(([a], [b]) => (a < b ? -1 : 1))
        : [['marker', { source: { kind: 'user', id: 'merge' }, ops: [] }]];
    const chunks: Uint8Array[] = [];
    const touched = new Set<string>();
    for (const [index, [bucketKey, bucket]] of changes.entries()) {
      const salt = createHash('sha256')
        .update(`${input.operationId}:${bucketKey}`)
        .digest('hex')
        .slice(0, 16);
      const actor = copyActorOf(bucket.source, salt);
      const message = `${key}#${index}`;
      const encoded = Automerge.encodeChange({
        actor,
        author: null,
        seq: 1,
        startOp: 1,
        time: Math.floor(input.at.getTime() / 1000),
        message,
        // No dependencies: concurrent with every change of this document.
        deps: [],
        ops: bucket.ops.map(
          ({ field, candidate }) =>
            ({
              action: 'set',
              obj: ROOT,
              key: field,
              value: encodeFieldValue(candidate.hlc, candidate.json),
              pred: [],
            }) as EncodableOp,
        ),
      });
      const hash = this.loadChange(encoded, message);
      this.seqByActor.set(actor, 1);
      this.lastByActor.set(actor, hash);
      this.lastAtCount.set(actor, this.changeCount());
      this.maxOp = Math.max(this.maxOp, bucket.ops.length);
      bucket.ops.forEach(({ field, candidate }, i) => {
        const added: Candidate = { ...candidate, opId: `${1 + i}@${actor}` };
        this.current.set(field, [...(this.current.get(field) ?? []), added]);
        touched.add(field);
      });
      chunks.push(encoded);
    }
    const at = { workspaceId: input.workspaceId, eventTime: input.at };
    const conflicts: ConflictRecord[] = [];
    for (const field of [...touched].sort()) {
      const now = this.current.get(field) ?? [];
      if (now.length > 1 && new Set(now.map((c) => c.json)).size > 1)
        conflicts.push(this.concurrentConflict(at, field, now, policyFor(policies, field)));
    }
    const synced = new Map<string, SyncedState>();
    for (const connectionId of [...input.connections].sort()) {
      const before = from.views.get(connectionId);
      if (before === undefined) continue;
      // Nothing of this entity seen; held, what it held of the other one (never held: nothing).
      const view = this.firstView(connectionId);
      const fields = new Set([...from.current.keys(), ...before.fields.keys(), ...view.fields.keys()]);
      for (const field of [...fields].sort()) {
        const policy = policyFor(policies, field);
        const held = from.heldBy(connectionId, before, field, policy);
        const seen = this.heldBy(connectionId, view, field, policy);
        if (held === undefined ? seen !== undefined : seen !== held) view.stale.set(field, held ?? 'null');
      }
      this.views.set(connectionId, view);
      synced.set(connectionId, this.syncedOf(view));
    }
    return { outcome: this.outcome(policies, 'applied', conflicts), chunk: concatBytes(chunks), synced };
  }

  /**
   * Gives back what a merge took in (`absorb`): its copies still standing are removed as one
   * change by the person who undid it, at the current heads. Where this entity has a value of
   * its own beside a copy, that value stays as it was; where only a copy stood, the field is
   * cleared, so the connections it was written to are owed the clear. A copy replaced since
   * (an edit made after the merge) is no longer standing and the edit stays. Values of this
   * entity's own that the copy stood beside and that differ are a conflict of their own now
   * (other candidates, so another id): it is reported, as any conflict is when it arises.
   */
  retract(input: RetractInput, policies: PolicyMap): ApplyResult {
    const message = `unmerge:${input.operationId}`;
    if (this.eventKeys.has(message)) {
      this.stats.duplicates++;
      return { outcome: this.outcome(policies, 'duplicate', []), chunk: null, synced: new Map() };
    }
    const prefix = `merge:${input.mergeOperationId}#`;
    const copies = new Set(
      this.backend
        .getChangesMeta([])
        .filter((m) => m.message?.startsWith(prefix) === true)
        .map((m) => m.actor),
    );
    const isCopy = (c: Candidate) => copies.has(c.opId.slice(c.opId.indexOf('@') + 1));
    const ms = input.at.getTime();
    const ops: EncodableOp[] = [];
    const after: { field: string; rest: Candidate[]; cleared?: number }[] = [];
    for (const field of [...this.current.keys()].sort()) {
      const candidates = this.current.get(field) ?? [];
      const taken = candidates.filter(isCopy);
      if (taken.length === 0) continue;
      const rest = candidates.filter((c) => !isCopy(c));
      const pred = taken.map((c) => c.opId);
      if (rest.length > 0) {
        ops.push({ action: 'del', obj: ROOT, key: field, pred } as EncodableOp);
        after.push({ field, rest });
        continue;
      }
      let seenHlc = -1;
      for (const c of candidates) seenHlc = Math.max(seenHlc, c.hlc);
      const hlc = Math.max(hlcOf(ms), seenHlc + 1);
      ops.push({
        action: 'set',
        obj: ROOT,
        key: field,
        value: encodeFieldValue(hlc, 'null'),
        pred,
      } as EncodableOp);
      after.push({ field, rest, cleared: hlc });
    }
    // Written even when nothing stands any more: a second delivery is then recognised.
    const { chunk, actor, startOp } = this.writeCurrent(input.by, message, ms, ops);
    const at = { workspaceId: input.workspaceId, eventTime: input.at };
    const conflicts: ConflictRecord[] = [];
    after.forEach(({ field, rest, cleared }, index) => {
      if (cleared === undefined) {
        this.current.set(field, rest);
        if (rest.length > 1 && new Set(rest.map((c) => c.json)).size > 1)
          conflicts.push(this.concurrentConflict(at, field, rest, policyFor(policies, field)));
      } else
        this.current.set(field, [
          { opId: `${startOp + index}@${actor}`, source: input.by, hlc: cleared, json: 'null' },
        ]);
    });
    return { outcome: this.outcome(policies, 'applied', conflicts), chunk, synced: new Map() };
  }

  /**
   * Takes back the connections of an undone merge (this is the split-off entity; `from` the
   * survivor it was merged into). Each brings the edits it made there while merged (its own
   * values still standing in `from`), merged here as its changes; then it is taken to hold
   * what it held there, so it is owed this entity's values again. A field it was written
   * there that this entity never had is cleared here, in the name of the person who undid it.
   */
  splitOff(from: EntityDocument, input: SplitOffInput, policies: PolicyMap): ApplyResult {
    const message = `unmerge:${input.operationId}`;
    if (this.eventKeys.has(message)) {
      this.stats.duplicates++;
      return { outcome: this.outcome(policies, 'duplicate', []), chunk: null, synced: new Map() };
    }
    const chunks: Uint8Array[] = [];
    const synced = new Map<string, SyncedState>();
    const conflicts: ConflictRecord[] = [];
    const clear = new Set<string>();
    for (const connectionId of [...input.connections].sort()) {
      const there = from.views.get(connectionId);
      if (there === undefined) continue;
      const own = actorOf({ kind: 'connection', id: connectionId });
      const fields: Record<string, unknown> = {};
      const fieldTimes: Record<string, Date> = {};
      for (const field of [...from.current.keys()].sort()) {
        const mine = (from.current.get(field) ?? []).find((c) => c.opId.endsWith(`@${own}`));
        if (mine === undefined) continue;
        fields[field] = JSON.parse(mine.json);
        fieldTimes[field] = new Date(hlcMillis(mine.hlc));
      }
      if (Object.keys(fields).length > 0) {
        const edits = this.applyInbound(
          {
            entityId: this.entityId,
            workspaceId: input.workspaceId,
            entityType: input.entityType,
            source: { kind: 'connection', id: connectionId },
            eventKey: `unmerge:${input.operationId}:${connectionId}`,
            eventTime: input.at,
            fields,
            fieldTimes,
          },
          policies,
        );
        if (edits.chunk !== null) chunks.push(edits.chunk);
        conflicts.push(...edits.outcome.conflicts);
      }
      const view = this.views.get(connectionId) ?? this.firstView(connectionId);
      const names = new Set([...from.current.keys(), ...there.fields.keys(), ...there.stale.keys()]);
      for (const field of [...names].sort()) {
        const policy = policyFor(policies, field);
        const held = from.heldBy(connectionId, there, field, policy);
        if (held === undefined || this.heldBy(connectionId, view, field, policy) === held) continue;
        view.stale.set(field, held);
        if (!this.current.has(field) && held !== 'null') clear.add(field);
      }
      this.views.set(connectionId, view);
      synced.set(connectionId, this.syncedOf(view));
    }
    // The clears, and the mark that this split-off is done (written even with nothing to clear).
    const hlc = hlcOf(input.at.getTime());
    const cleared = [...clear].sort();
    const { chunk, actor, startOp } = this.writeCurrent(
      input.by,
      message,
      input.at.getTime(),
      cleared.map(
        (field) =>
          ({
            action: 'set',
            obj: ROOT,
            key: field,
            value: encodeFieldValue(hlc, 'null'),
            pred: [],
          }) as EncodableOp,
      ),
    );
    chunks.push(chunk);
    cleared.forEach((field, index) => {
      this.current.set(field, [{ opId: `${startOp + index}@${actor}`, source: input.by, hlc, json: 'null' }]);
    });
    return { outcome: this.outcome(policies, 'applied', conflicts), chunk: concatBytes(chunks), synced };
  }

  /** One change of `source` at the current heads (a person's change), applied and counted. */
  private writeCurrent(
    source: SourceRef,
    message: string,
    ms: number,
    ops: EncodableOp[],
  ): { chunk: Uint8Array; actor: string; startOp: number } {
    const actor = actorOf(source);
    const seq = (this.seqByActor.get(actor) ?? 0) + 1;
    const startOp = this.maxOp + 1;
    const chunk = Automerge.encodeChange({
      actor,
      author: null,
      seq,
      startOp,
      time: Math.floor(ms / 1000),
      message,
      deps: [...this.heads],
      ops,
    });
    const hash = this.loadChange(chunk, message);
    this.seqByActor.set(actor, seq);
    this.lastByActor.set(actor, hash);
    this.lastAtCount.set(actor, this.changeCount());
    this.maxOp = Math.max(this.maxOp, startOp + ops.length - 1);
    this.stats.merged++;
    return { chunk, actor, startOp };
  }

  /** Applies one encoded change; its hash, or an error if it did not become a head. */
  private loadChange(encoded: Uint8Array, message: string): string {
    const before = new Set(this.heads);
    this.backend.loadIncremental(encoded);
    this.appliedChanges++;
    this.heads = this.backend.getHeads();
    const hash = this.heads.find((h) => !before.has(h));
    if (hash === undefined) throw new Error(`change ${message} did not become a head`);
    this.eventKeys.add(message);
    return hash;
  }

  private changeCount(): number {
    return this.loadedChanges + this.appliedChanges;
  }

  private recentAt(key: string): RecentView | undefined {
    return this.recent.get(key) ?? this.written.get(key);
  }

  /** A connection's receipt of these heads: they, and its older ones, are no longer owed it. */
  private received(connectionId: string, key: string): void {
    if (!this.written.get(key)?.owed.has(connectionId)) return;
    for (const [k, view] of this.written) {
      view.owed.delete(connectionId);
      if (view.owed.size === 0) this.written.delete(k);
      if (k === key) break;
    }
  }

  /**
   * These heads were written out to a connection: their fields are kept (see `written`) until
   * its receipt. Heads whose fields are not at hand (neither current nor recent) are left to
   * Automerge.
   */
  keepWritten(connectionId: string, heads: readonly string[]): void {
    const key = headsKey(heads);
    const kept = this.written.get(key);
    const view = kept ?? this.recent.get(key) ?? (sameHeads(heads, this.heads) ? this.viewNow() : undefined);
    if (view === undefined) return;
    const owed = kept?.owed ?? new Set<string>();
    owed.add(connectionId);
    this.written.delete(key);
    this.written.set(key, { ...view, owed });
    if (this.written.size > WRITTEN_VIEWS) this.written.delete(this.written.keys().next().value as string);
  }

  /** The fields at the current heads, as `recent` and `written` keep them. */
  private viewNow(): RecentView {
    return { maxOp: this.maxOp, changes: this.changeCount(), fields: new Map(this.current) };
  }

  /** Keeps the fields at the current heads among the recent ones (see `recent`). */
  private remember(): void {
    const key = headsKey(this.heads);
    this.recent.delete(key);
    this.recent.set(key, this.viewNow());
    if (this.recent.size > RECENT_VIEWS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** Whether a connection carries this entity (has synced heads here). */
  knows(connectionId: string): boolean {
    return this.views.has(connectionId);
  }

  private currentView(): View {
    return { heads: [...this.heads], maxOp: this.maxOp, fields: new Map(this.current), stale: new Map() };
  }

  private syncedOf(view: View): SyncedState {
    return { heads: [...view.heads], stale: Object.fromEntries(view.stale) };
  }

  private concurrentConflict(
    change: Pick<InboundChange, 'workspaceId' | 'eventTime'>,
    field: string,
    candidates: Candidate[],
    policy: FieldPolicy,
  ): ConflictRecord {
    const res = this.resolve(candidates, policy);
    const ordered = [...candidates].sort((a, b) => (a.opId < b.opId ? -1 : 1));
    return {
      id: conflictId(
        this.entityId,
        field,
        'concurrent',
        ordered.map((c) => c.opId),
      ),
      workspaceId: change.workspaceId,
      entityId: this.entityId,
      field,
      kind: 'concurrent',
      policy: policy.kind,
      candidates: ordered.map((c) => this.conflictCandidate(field, c.json, c)),
      ...(res.open ? {} : { winner: this.conflictCandidate(field, res.json, res.credited) }),
      status: res.open ? 'open' : 'resolved',
      detectedAt: change.eventTime,
    };
  }

  private lateConflict(
    change: InboundChange,
    field: string,
    json: string,
    ms: number,
    over: Candidate,
  ): ConflictRecord {
    const kept = this.conflictCandidate(field, over.json, over);
    return {
      id: conflictId(this.entityId, field, 'late', [sourceKey(change.source), change.eventKey]),
      workspaceId: change.workspaceId,
      entityId: this.entityId,
      field,
      kind: 'late',
      policy: 'lww',
      candidates: [{ value: JSON.parse(json), source: change.source, eventTime: new Date(ms) }, kept],
      winner: kept,
      status: 'resolved',
      detectedAt: change.eventTime,
    };
  }

  private conflictCandidate(field: string, json: string, credited: Candidate): ConflictCandidate {
    return {
      value: this.valueOf(field, json),
      source: credited.source,
      eventTime: new Date(hlcMillis(credited.hlc)),
    };
  }

  /** Current values with provenance, and what every connection is owed. */
  outcome(
    policies: PolicyMap,
    status: MergeOutcome['status'] = 'applied',
    conflicts: ConflictRecord[] = [],
  ): MergeOutcome {
    const { values, provenance } = this.state(policies);
    const owed = new Map<string, string[]>();
    const held = new Map<string, Record<string, unknown>>();
    for (const [connectionId, view] of this.views) {
      const fields: string[] = [];
      const holds: Record<string, unknown> = {};
      for (const [field, candidates] of this.current) {
        const policy = policyFor(policies, field);
        const now = this.resolve(candidates, policy);
        if (now.open) continue; // a manual conflict is written back once a person decides
        const json = this.heldBy(connectionId, view, field, policy);
        if (json === now.json) continue;
        // No value for a field the connection never held: nothing to clear (a write of the
        // empty value would leave the record as it was, and no report of it would come back).
        if (json === undefined && now.json === 'null') continue;
        fields.push(field);
        if (json !== undefined) holds[field] = JSON.parse(json);
      }
      // A value the connection was written for another entity (a write of the entity this one
      // was merged into, landed after the unmerge gave the record back), of a field this
      // entity has no value for: it is owed the clear.
      for (const [field, json] of view.stale) {
        if (this.current.has(field) || json === 'null') continue;
        fields.push(field);
        holds[field] = JSON.parse(json);
      }
      owed.set(connectionId, fields.sort());
      held.set(connectionId, holds);
    }
    return {
      entityId: this.entityId,
      status,
      values,
      provenance,
      conflicts,
      owed,
      held,
      heads: [...this.heads],
    };
  }

  /**
   * The value a connection holds for a field: a late value it kept, else the value it saw.
   * While a manual conflict was open nothing was written to it, so it holds its own value
   * (unknown if it was not one of the sides): its latest, if a merge of entities brought a
   * copy of an older one beside it. Chosen by clock and op id, not by the candidates' order,
   * which differs between a document kept in memory and the same document loaded.
   */
  private heldBy(connectionId: string, view: View, field: string, policy: FieldPolicy): string | undefined {
    const stale = view.stale.get(field);
    if (stale !== undefined) return stale;
    const seen = view.fields.get(field);
    if (seen === undefined || seen.length === 0) return undefined;
    const res = this.resolve(seen, policy);
    if (!res.open) return res.json;
    let own: Candidate | undefined;
    for (const c of seen)
      if (c.source.kind === 'connection' && c.source.id === connectionId)
        if (own === undefined || c.hlc > own.hlc || (c.hlc === own.hlc && c.opId > own.opId)) own = c;
    return own?.json;
  }

  state(policies: PolicyMap): EntityState {
    return this.stateOf(this.current, policies, true);
  }

  private stateOf(
    fields: ReadonlyMap<string, Candidate[]>,
    policies: PolicyMap,
    cache: boolean,
  ): EntityState {
    const values: EntityState['values'] = {};
    const provenance: EntityState['provenance'] = {};
    for (const [field, candidates] of fields) {
      const res = cache
        ? this.resolve(candidates, policyFor(policies, field))
        : resolveField(candidates, policyFor(policies, field));
      values[field] = cache ? this.valueOf(field, res.json) : JSON.parse(res.json);
      provenance[field] = {
        source: res.credited.source,
        eventTime: new Date(hlcMillis(res.credited.hlc)),
        conflicted: res.open,
      };
    }
    return { values, provenance };
  }

  /** The entity as it was at some heads, or at a time (changes up to that second, with their causes). */
  valueAt(at: readonly string[] | Date, policies: PolicyMap): EntityState {
    const heads = at instanceof Date ? this.headsAtTime(at) : [...at];
    if (heads.length === 0) return { values: {}, provenance: {} };
    const fields = new Map<string, Candidate[]>();
    for (const key of this.backend.keys(ROOT, heads)) fields.set(key, this.candidates(key, heads));
    return this.stateOf(fields, policies, false);
  }

  private headsAtTime(at: Date): string[] {
    const second = Math.floor(at.getTime() / 1000);
    const included = this.backend.getChangesMeta([]).filter((m) => m.time <= second);
    const deps = new Set(included.flatMap((m) => m.deps));
    return included.map((m) => m.hash).filter((h) => !deps.has(h));
  }

  /** Every change with its origin, in causal order. */
  history(): HistoryEntry[] {
    return this.backend.getChangesMeta([]).map((meta) => {
      const decoded = this.backend.getDecodedChangeByHash(meta.hash);
      const fields: HistoryEntry['fields'] = {};
      for (const op of decoded?.ops ?? []) {
        if (op.action !== 'set' || op.obj !== ROOT) continue;
        const { hlc, json } = decodeFieldValue(String(op.value));
        fields[op.key] = { value: JSON.parse(json), eventTime: new Date(hlcMillis(hlc)) };
      }
      return {
        hash: meta.hash,
        source: sourceOfActor(meta.actor),
        eventKey: meta.message ?? '',
        time: new Date(meta.time * 1000),
        deps: [...meta.deps],
        fields,
      };
    });
  }

  /** Ids of the conflicts standing now (fields with concurrent values), as recorded when they arose. */
  standingConflictIds(): string[] {
    const ids: string[] = [];
    for (const [field, candidates] of this.current) {
      if (candidates.length < 2 || new Set(candidates.map((c) => c.json)).size < 2) continue;
      const opIds = candidates.map((c) => c.opId).sort((a, b) => (a < b ? -1 : 1));
      ids.push(conflictId(this.entityId, field, 'concurrent', opIds));
    }
    return ids.sort();
  }

  getHeads(): string[] {
    return [...this.heads];
  }

  /** Digest of the whole history: change hashes chain their ancestors, so the heads suffice. */
  historyDigest(): string {
    return createHash('sha256')
      .update([...this.heads].sort().join(','))
      .digest('hex');
  }

  /** Compacted snapshot of the whole document. */
  save(): Uint8Array {
    return this.backend.save();
  }

  syncedState(connectionId: string): SyncedState | undefined {
    const view = this.views.get(connectionId);
    return view === undefined ? undefined : this.syncedOf(view);
  }

  /**
   * An estimate of the memory this document holds (Automerge's WebAssembly heap and the
   * JavaScript maps beside it), which is what a cache budget has to bound: its stored size
   * undercounts it 15–40 times. Measured (`memory-estimate.spec.ts`) at 10–16 KiB per
   * document, about 240 bytes per change it was loaded with, and about 510 bytes per change
   * merged into it since, deferred or applied (Automerge keeps more per change taken in after
   * a load than per change loaded in bulk); the coefficients round those up, so a budget errs
   * on the safe side. The fields kept for heads written out (`written`) are a map each.
   */
  memoryBytes(): number {
    const kept = this.written.size * (128 + 64 * this.current.size);
    return 16 * 1024 + 320 * this.loadedChanges + 576 * this.appliedChanges + kept;
  }

  /** Releases the document's WebAssembly memory; the object is unusable afterwards. */
  free(): void {
    this.deferred = [];
    this.deferredMaxOp.clear();
    this.handle.free();
  }
}

/**
 * The hash of an encoded change chunk: SHA-256 of everything after its magic bytes and
 * checksum (the checksum is the hash's first four bytes, which this confirms); Automerge's
 * own decoding where they disagree.
 */
function changeHash(chunk: Uint8Array): string {
  const hash = createHash('sha256').update(chunk.subarray(8)).digest();
  const checksum = chunk.length > 8 && hash.compare(chunk, 4, 8, 0, 4) === 0;
  return checksum ? hash.toString('hex') : Automerge.decodeChange(chunk).hash;
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function sameSource(a: SourceRef, b: SourceRef): boolean {
  return a.kind === b.kind && a.id === b.id;
}

function sameHeads(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(b);
  return a.every((h) => set.has(h));
}

/** A UUID (version 8, name-based) from the conflict's identity, so a replay records it once. */
export function conflictId(entityId: string, field: string, kind: string, parts: readonly string[]): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([entityId, field, kind, ...parts]))
    .digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
