import { FACT_KINDS, kindOf, type MatchRecord } from './match-record';

/** One handle, or several: most keys belong to exactly one entity, so they cost no array. */
type Slot = number | number[];

const EMPTY: readonly number[] = [];
const NO_NAMES: readonly string[] = [];
const NO_MERGE = -1;

function addTo(map: Map<string, Slot>, key: string, handle: number): void {
  const slot = map.get(key);
  if (slot === undefined) map.set(key, handle);
  else if (typeof slot === 'number') {
    if (slot !== handle) map.set(key, [slot, handle]);
  } else if (!slot.includes(handle)) slot.push(handle);
}

const asList = (slot: Slot | undefined): readonly number[] =>
  slot === undefined ? EMPTY : typeof slot === 'number' ? [slot] : slot;

/**
 * In-memory index of the canonical entities of one workspace and entity type: deterministic
 * keys and blocking keys map to small integer handles, handles map to entity ids and names.
 * It is pure (no I/O) and a cache: the persistence adapter rebuilds it from `match_key` and
 * `entity`, and refreshes deterministic keys from the database before every decision.
 */
export class MatchIndex {
  private readonly ids: string[] = [];
  private readonly handles = new Map<string, number>();
  private mergedInto = new Int32Array(1024).fill(NO_MERGE);
  private readonly names: string[] = [];
  /** Further distinct names of an entity linked to several records; rare, so kept aside. */
  private readonly moreNames = new Map<number, string[]>();
  private readonly keys = new Map<string, Slot>();
  private readonly blocks = new Map<string, Slot>();
  /** Keys of a `FACT_KINDS` kind, per entity: deals and meetings only, so kept aside. */
  private readonly facts = new Map<number, Set<string>>();
  /** Connections an entity has records from, where known (the adapter reads them when it needs them). */
  private readonly connections = new Map<number, Set<string>>();

  get size(): number {
    return this.ids.length;
  }

  /** The handle of an entity, created on first sight. */
  handle(entityId: string): number {
    let handle = this.handles.get(entityId);
    if (handle === undefined) {
      handle = this.ids.length;
      this.ids.push(entityId);
      this.names.push('');
      this.handles.set(entityId, handle);
      if (handle >= this.mergedInto.length) {
        const grown = new Int32Array(this.mergedInto.length * 2).fill(NO_MERGE);
        grown.set(this.mergedInto);
        this.mergedInto = grown;
      }
    }
    return handle;
  }

  has(entityId: string): boolean {
    return this.handles.has(entityId);
  }

  entityId(handle: number): string {
    const id = this.ids[handle];
    if (id === undefined) throw new Error(`no entity with handle ${handle}`);
    return id;
  }

  /** The entity a handle's entity was merged into, transitively; itself when not merged. */
  survivor(handle: number): number {
    let current = handle;
    for (let next = this.mergedInto[current]!; next !== NO_MERGE; next = this.mergedInto[current]!) {
      current = next;
    }
    return current;
  }

  /** Adds a record's keys, blocks and name to an entity. */
  add(entityId: string, record: MatchRecord): number {
    const handle = this.handle(entityId);
    for (const key of record.keys) this.addKey(key, handle);
    for (const block of record.blocks) addTo(this.blocks, block, handle);
    if (record.name) this.addName(handle, record.name);
    if (record.source) this.addConnections(handle, [record.source]);
    return handle;
  }

  /** Adds one deterministic key to an entity, keeping its facts. */
  addKey(key: string, handle: number): void {
    addTo(this.keys, key, handle);
    if (FACT_KINDS.has(kindOf(key))) {
      const facts = this.facts.get(handle);
      if (facts) facts.add(key);
      else this.facts.set(handle, new Set([key]));
    }
  }

  /** The keys of a fact kind an entity holds (its own, not those of entities merged into it). */
  factsOf(handle: number): ReadonlySet<string> | undefined {
    return this.facts.get(handle);
  }

  addConnections(handle: number, connectionIds: Iterable<string>): void {
    let set = this.connections.get(handle);
    if (!set) {
      set = new Set();
      this.connections.set(handle, set);
    }
    for (const id of connectionIds) set.add(id);
  }

  /** Replaces the connections an entity has records from, as the database has them now. */
  setConnections(handle: number, connectionIds: Iterable<string>): void {
    this.connections.set(handle, new Set(connectionIds));
  }

  /** Whether an entity is known to have a record from a connection. */
  hasConnection(handle: number, connectionId: string): boolean {
    return this.connections.get(handle)?.has(connectionId) ?? false;
  }

  addName(handle: number, name: string): void {
    const first = this.names[handle];
    if (!first) {
      this.names[handle] = name;
      return;
    }
    if (first === name) return;
    const more = this.moreNames.get(handle);
    if (!more) this.moreNames.set(handle, [name]);
    else if (!more.includes(name)) more.push(name);
  }

  /** Every name an entity was seen with (its own, not those of entities merged into it). */
  namesOf(handle: number): readonly string[] {
    const first = this.names[handle];
    if (!first) return NO_NAMES;
    const more = this.moreNames.get(handle);
    return more ? [first, ...more] : [first];
  }

  /** Entities holding a deterministic key (not resolved through merges). */
  withKey(key: string): readonly number[] {
    return asList(this.keys.get(key));
  }

  /** Entities in a block. */
  inBlock(block: string): readonly number[] {
    return asList(this.blocks.get(block));
  }

  /** Replaces who holds a deterministic key, from the authoritative store. */
  setKey(key: string, unordered: readonly string[]): void {
    // In id order, as the database's rows come in no order of their own: a key two entities
    // hold names them in the same order in every process, a fresh one or a replay's.
    const entityIds = unordered.length > 1 ? [...unordered].sort() : unordered;
    if (FACT_KINDS.has(kindOf(key))) {
      for (const old of asList(this.keys.get(key))) this.facts.get(old)?.delete(key);
      this.keys.delete(key);
      for (const id of entityIds) this.addKey(key, this.handle(id));
      return;
    }
    if (entityIds.length === 0) this.keys.delete(key);
    else if (entityIds.length === 1) this.keys.set(key, this.handle(entityIds[0]!));
    else this.keys.set(key, [...new Set(entityIds.map((id) => this.handle(id)))]);
  }

  merge(absorbedId: string, survivorId: string): void {
    const absorbed = this.handle(absorbedId);
    const survivor = this.handle(survivorId);
    if (this.survivor(survivor) === absorbed) throw new Error('merge would make a cycle');
    this.mergedInto[absorbed] = survivor;
  }

  unmerge(absorbedId: string): void {
    this.mergedInto[this.handle(absorbedId)] = NO_MERGE;
  }
}
