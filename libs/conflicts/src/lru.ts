interface Slot<V> {
  value: V;
  weight: number;
}

/** Share of the count and weight caps the protected segment may hold. */
const PROTECTED_SHARE = 0.8;

/**
 * A segmented LRU map (SLRU) with two caps: an entry count and a total weight (e.g. bytes).
 * A new entry goes on probation; one used again while cached moves to the protected segment
 * (at most 80 % of either cap, its least recently used demoted back to probation). Eviction
 * takes the least recently used entry on probation first, so a stream of entries used once
 * (a backfill passing through, the long tail of cold records) cycles through probation and
 * leaves the entries in repeated use cached, where a plain LRU would let it push them all out.
 * Each segment is a Map, which keeps insertion order: re-inserting on use is enough. The
 * entry just set or used is never evicted, so one entry heavier than the whole budget still
 * stays usable.
 */
export class Lru<K, V> {
  private readonly probation = new Map<K, Slot<V>>();
  private readonly protected = new Map<K, Slot<V>>();
  private totalWeight = 0;
  private protectedWeight = 0;

  constructor(
    private readonly capacity: number,
    private readonly onEvict: (key: K, value: V) => void,
    private readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const held = this.protected.get(key);
    if (held !== undefined) {
      this.protected.delete(key);
      this.protected.set(key, held);
      return held.value;
    }
    const slot = this.probation.get(key);
    if (slot === undefined) return undefined;
    this.probation.delete(key);
    this.protected.set(key, slot);
    this.protectedWeight += slot.weight;
    this.demote(key);
    return slot.value;
  }

  /** The entry, without counting it as a use. */
  peek(key: K): V | undefined {
    return (this.protected.get(key) ?? this.probation.get(key))?.value;
  }

  set(key: K, value: V, weight = 0): void {
    const held = this.protected.get(key);
    if (held !== undefined) {
      // Replacing an entry in use keeps it protected.
      this.protected.delete(key);
      this.protected.set(key, { value, weight });
      this.protectedWeight += weight - held.weight;
      this.totalWeight += weight - held.weight;
      this.demote(key);
    } else {
      const old = this.probation.get(key);
      if (old !== undefined) {
        this.totalWeight -= old.weight;
        this.probation.delete(key);
      }
      this.probation.set(key, { value, weight });
      this.totalWeight += weight;
    }
    this.trim(key);
  }

  /** Updates an entry's weight (its document grew or was compacted), evicting if now over budget. */
  reweigh(key: K, weight: number): void {
    const held = this.protected.get(key);
    const slot = held ?? this.probation.get(key);
    if (slot === undefined) return;
    this.totalWeight += weight - slot.weight;
    if (held !== undefined) this.protectedWeight += weight - slot.weight;
    slot.weight = weight;
    if (held !== undefined) this.demote(key);
    this.trim(key);
  }

  delete(key: K): void {
    const held = this.protected.get(key);
    const slot = held ?? this.probation.get(key);
    if (slot === undefined) return;
    if (held !== undefined) {
      this.protected.delete(key);
      this.protectedWeight -= slot.weight;
    } else {
      this.probation.delete(key);
    }
    this.totalWeight -= slot.weight;
    this.onEvict(key, slot.value);
  }

  clear(): void {
    for (const key of [...this.probation.keys(), ...this.protected.keys()]) this.delete(key);
  }

  get size(): number {
    return this.probation.size + this.protected.size;
  }

  get weight(): number {
    return this.totalWeight;
  }

  /** Moves the protected segment's least recently used entries (never `keep`) to probation while it is over its share. */
  private demote(keep: K): void {
    while (
      this.protected.size > 1 &&
      (this.protected.size > this.capacity * PROTECTED_SHARE ||
        this.protectedWeight > this.maxWeight * PROTECTED_SHARE)
    ) {
      const key = oldest(this.protected, keep);
      if (key === undefined) return;
      const slot = this.protected.get(key)!;
      this.protected.delete(key);
      this.protectedWeight -= slot.weight;
      this.probation.set(key, slot);
    }
  }

  private trim(keep: K): void {
    while (this.size > 1 && (this.size > this.capacity || this.totalWeight > this.maxWeight)) {
      const victim = oldest(this.probation, keep) ?? oldest(this.protected, keep);
      if (victim === undefined) return;
      this.delete(victim);
    }
  }
}

/** The least recently used key of a segment other than `keep`. */
function oldest<K>(segment: Map<K, unknown>, keep: K): K | undefined {
  for (const key of segment.keys()) if (key !== keep) return key;
  return undefined;
}
