/**
 * mulberry32: a tiny seeded generator, for what must be reproducible from a seed: every choice
 * an emulator makes that a real provider makes arbitrarily (ids, tokens, webhook order, page
 * gaps, duplicates, faults at a rate), the benches' synthetic workloads, property tests' orders.
 * Not for secrets.
 */
export class Mulberry32 {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

/** A seeded generator of floats in [0, 1), as a function. */
export function mulberry32(seed: number): () => number {
  const generator = new Mulberry32(seed);
  return () => generator.next();
}
