/**
 * How many events a consumer's next batch reads. A batch pays a fixed cost (its round trips,
 * and per record it touches, its view, writes and locks) however few events it folds, so a
 * partition behind folds faster in larger batches: more of each record's changes share one
 * save. A larger batch also holds the member longer, and every other partition it leases waits
 * for it. So the size starts at `base` and grows while batches come back full (a backlog)
 * and quicker than `targetMs`, toward the size that would take about `targetMs` at the rate the
 * last batch went, at most doubling a batch and never above `max`; a batch slower than the target
 * brings it down the same way, and a failed batch back to `base`.
 */
export class BatchSizer {
  private size: number;

  constructor(
    private readonly base: number,
    private readonly max: number,
    private readonly targetMs: number,
  ) {
    this.size = base;
  }

  /** Events the next batch reads at most. */
  get limit(): number {
    return this.size;
  }

  /** A batch took `events` (its limit was `limit`) and committed `elapsedMs` after it began. */
  observe(events: number, limit: number, elapsedMs: number): void {
    if (events === 0 || this.max <= this.base) return;
    const fitting = Math.floor((events * this.targetMs) / Math.max(1, elapsedMs));
    if (elapsedMs > this.targetMs) this.size = Math.max(this.base, Math.min(this.size, fitting));
    else if (events >= limit) this.size = Math.min(this.max, 2 * limit, Math.max(this.size, fitting));
  }

  /** The batch failed: the next one is as small as a quiet one. */
  failed(): void {
    this.size = this.base;
  }
}
