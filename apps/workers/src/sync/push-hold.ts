/**
 * Holds the pushes the sync stage's batches owe while the stage is behind (its partitions
 * still had a whole batch waiting between them after their last reads), each connection for at most
 * `maxHoldMs` from the batch that first owed it. Meanwhile the outbox gathers: each record's
 * pending update is set aside by the next one the stage queues (writeOutbox), so a backlog
 * sends the record's latest values once, not every value it went through on the way, and a
 * burst of edits costs the target one write per record instead of one per edit (and the sync
 * stage one echo per write). Once the stage has caught up, all that is held is pushed at
 * once. A hold only delays a push: the rows are durable in the outbox, and a hold lost with
 * its process is pushed by the outbox sweep.
 */
export class PushHold {
  /** Held connections, each with when the first batch that owed it committed. */
  private readonly since = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly options: {
      /** Longest a connection's push is held (0: never held). */
      maxHoldMs: number;
      /** Pushes these connections now. */
      push: (connectionIds: readonly string[]) => Promise<void>;
      onError: (error: unknown) => void;
      now?: () => number;
    },
  ) {
    this.now = options.now ?? Date.now;
  }

  /** After a batch committed: the connections it owes writes, and whether the stage is still behind. */
  async owed(connectionIds: Iterable<string>, behind: boolean): Promise<void> {
    if (!behind || this.options.maxHoldMs === 0) {
      const due = new Set([...this.since.keys(), ...connectionIds]);
      this.since.clear();
      this.disarm();
      if (due.size > 0) await this.options.push([...due]);
      return;
    }
    const now = this.now();
    for (const id of connectionIds) if (!this.since.has(id)) this.since.set(id, now);
    await this.releaseDue();
  }

  /** Connections held now. */
  held(): string[] {
    return [...this.since.keys()];
  }

  /** Pushes everything held (the consumer stops). */
  async release(): Promise<void> {
    await this.owed([], false);
  }

  /** Pushes the connections held for `maxHoldMs`, and wakes when the next one will be. */
  private async releaseDue(): Promise<void> {
    const now = this.now();
    const due: string[] = [];
    for (const [id, since] of this.since) if (now - since >= this.options.maxHoldMs) due.push(id);
    for (const id of due) this.since.delete(id);
    this.arm();
    if (due.length > 0) await this.options.push(due);
  }

  /**
   * A timer for the earliest held connection: its push goes at its time even if no further
   * batch commits (the backlog was the stage's last work, or the stage is stuck on an error).
   */
  private arm(): void {
    this.disarm();
    if (this.since.size === 0) return;
    const earliest = Math.min(...this.since.values());
    const wait = Math.max(0, earliest + this.options.maxHoldMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.releaseDue().catch(this.options.onError);
    }, wait);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
