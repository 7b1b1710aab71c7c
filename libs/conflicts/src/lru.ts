/**
 * Least-recently-used map with two caps: an entry count and a total weight (e.g. bytes).
 * A Map keeps insertion order, so re-inserting on use is enough. The most recently used
 * entry is never evicted, so one entry heavier than the whole budget still stays usable.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private totalWeight = 0;

  constructor(
    private readonly capacity: number,
    private readonly onEvict: (key: K, value: V) => void,
    private readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, slot);
    return slot.value;
  }

  /** The entry, without counting it as a use. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: K, value: V, weight = 0): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.totalWeight -= old.weight;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, weight });
    this.totalWeight += weight;
    this.trim();
  }

  /** Updates an entry's weight (its document grew or was compacted), evicting if now over budget. */
  reweigh(key: K, weight: number): void {
    const slot = this.entries.get(key);
    if (slot === undefined) return;
    this.totalWeight += weight - slot.weight;
    slot.weight = weight;
    this.trim();
  }

  delete(key: K): void {
    const slot = this.entries.get(key);
    if (slot === undefined) return;
    this.entries.delete(key);
    this.totalWeight -= slot.weight;
    this.onEvict(key, slot.value);
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  get weight(): number {
    return this.totalWeight;
  }

  private trim(): void {
    while (
      this.entries.size > 1 &&
      (this.entries.size > this.capacity || this.totalWeight > this.maxWeight)
    ) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
  }
}
