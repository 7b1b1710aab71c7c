/**
 * Holds the pushes the sync stage's batches owe while their partition is behind (it still
 * had a whole batch waiting after the batch's read), each connection for at most
 * `maxHoldMs` from the batch that first owed it. Meanwhile the outbox gathers: each record's
 * pending update is set aside by the next one the stage queues (writeOutbox), so a backlog
 * sends the record's latest values once, not every value it went through on the way, and a
 * burst of edits costs the target one write per record instead of one per edit (and the sync
 * stage one echo per write). Once the partition has caught up, all it held is pushed at
 * once. A hold only delays a push: the rows are durable in the outbox, and a hold lost with
 * its process is pushed by the outbox sweep.
 */
export class PushHold {
  /** Held connections: when the first batch that owed each committed, and the partitions it came from. */
  private readonly held = new Map<string, { since: number; partitions: Set<number> }>();
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

  /**
   * After a batch committed: the connections it owes writes, the partitions it read, and
   * whether those are still behind. A workspace's changes are all on one partition, so a
   * backlog in one workspace holds only its own connections' pushes: a batch of another
   * partition that is not behind pushes its own at once, and what the backlogged partition
   * held waits for that partition to catch up.
   */
  async owed(
    connectionIds: Iterable<string>,
    batch: { partitions: readonly number[]; behind: boolean },
  ): Promise<void> {
    if (!batch.behind || this.options.maxHoldMs === 0) {
      // Caught up on these partitions: what they held goes now, with what the batch owes.
      const due = new Set(connectionIds);
      for (const [id, { partitions }] of this.held)
        if (batch.partitions.some((p) => partitions.has(p))) due.add(id);
      for (const id of due) this.held.delete(id);
      this.arm();
      if (due.size > 0) await this.options.push([...due]);
      return;
    }
    const now = this.now();
    for (const id of connectionIds) {
      const entry = this.held.get(id) ?? { since: now, partitions: new Set<number>() };
      for (const p of batch.partitions) entry.partitions.add(p);
      this.held.set(id, entry);
    }
    await this.releaseDue();
  }

  /** Connections held now. */
  heldConnections(): string[] {
    return [...this.held.keys()];
  }

  /** Pushes everything held (the consumer stops). */
  async release(): Promise<void> {
    const all = this.heldConnections();
    this.held.clear();
    this.disarm();
    if (all.length > 0) await this.options.push(all);
  }

  /** Pushes the connections held for `maxHoldMs`, and wakes when the next one will be. */
  private async releaseDue(): Promise<void> {
    const now = this.now();
    const due: string[] = [];
    for (const [id, { since }] of this.held) if (now - since >= this.options.maxHoldMs) due.push(id);
    for (const id of due) this.held.delete(id);
    this.arm();
    if (due.length > 0) await this.options.push(due);
  }

  /**
   * A timer for the earliest held connection: its push goes at its time even if no further
   * batch commits (the backlog was the stage's last work, or the stage is stuck on an error,
   * or its partition went to another member).
   */
  private arm(): void {
    this.disarm();
    if (this.held.size === 0) return;
    const earliest = Math.min(...[...this.held.values()].map((h) => h.since));
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
