/**
 * A batch that grew and folded at less than this share of the rate before it went back.
 * Larger batches are usually quicker per event, and timings on a busy box move by tens of per
 * cent: only a clear loss counts.
 */
const SLOWER = 2 / 3;

/**
 * How many events a partition's next batch reads when it goes alone (a consumer keeps one per
 * partition: what a batch costs depends on the records its partition holds). A batch pays a
 * fixed cost (its round trips, and per record it touches, its view, writes and locks) however
 * few events it folds, so a
 * partition behind folds faster in larger batches: more of each record's changes share one
 * save. A larger batch also holds the member longer, and every other partition it leases waits
 * for it. So the size starts at `base` and grows while batches come back full (a backlog)
 * and quicker than `targetMs`, toward the size that would take about `targetMs` at the rate the
 * last batch went, at most doubling a batch and never above `max`; a batch slower than the target
 * brings it down the same way, and a failed batch back to `base`.
 *
 * Growing is undone where it does not pay: a grown batch that folded clearly slower per event
 * than the one before it (a working set past what the handler keeps in memory, say) goes back
 * to the size before, which stays the ceiling until the backlog ends (a batch that is not full).
 */
export class BatchSizer {
  private size: number;
  /** The size and rate (events/ms) of the last full batch before the size grew. */
  private grownFrom: { size: number; rate: number } | undefined;
  private ceiling: number;

  constructor(
    private readonly base: number,
    private readonly max: number,
    private readonly targetMs: number,
  ) {
    this.size = base;
    this.ceiling = max;
  }

  /** Events the next batch reads at most. */
  get limit(): number {
    return this.size;
  }

  /** A batch took `events` (its limit was `limit`) and committed `elapsedMs` after it began. */
  observe(events: number, limit: number, elapsedMs: number): void {
    if (events === 0 || this.max <= this.base) return;
    const elapsed = Math.max(1, elapsedMs);
    const rate = events / elapsed;
    const fitting = Math.floor((events * this.targetMs) / elapsed);
    if (events < limit) {
      // Not full: no backlog (any more). The next one may grow again as far as the max.
      this.ceiling = this.max;
      this.grownFrom = undefined;
      if (elapsed > this.targetMs) this.size = this.within(this.size, fitting);
      return;
    }
    if (this.grownFrom !== undefined && limit > this.grownFrom.size) {
      const before = this.grownFrom;
      this.grownFrom = undefined;
      if (rate < before.rate * SLOWER) {
        this.ceiling = before.size;
        this.size = elapsed > this.targetMs ? this.within(before.size, fitting) : before.size;
        return;
      }
    }
    if (elapsed > this.targetMs) {
      this.size = this.within(this.size, fitting);
      return;
    }
    const next = Math.min(this.max, this.ceiling, 2 * limit, Math.max(this.size, fitting));
    if (next > limit) this.grownFrom = { size: limit, rate };
    this.size = next;
  }

  /** A size brought down after a slow batch: what fits the target, below `upTo`, never below the base. */
  private within(upTo: number, fitting: number): number {
    return Math.max(this.base, Math.min(upTo, fitting));
  }

  /** The batch failed: the next one is as small as a quiet one. */
  failed(): void {
    this.size = this.base;
    this.grownFrom = undefined;
  }
}
