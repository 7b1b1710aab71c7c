import { createHash } from 'node:crypto';
import { type Queryable, storableJson, storableText } from '@syncline/core';
import { Client, type ClientConfig } from 'pg';
import { asOid, groupLockKey, MEMBERSHIP } from './advisory-keys';
import { BatchSizer } from './batch-sizer';
import { LOG_NOTIFY_CHANNEL } from './change-log';
import { withGenericPlans } from './generic-plans';
import { LOG_EVENT_COLUMNS, type LogEvent, type LogEventRow, toLogEvent } from './log-event';

/** The transaction a handler runs in; it commits together with the new offset. */
export type LogTransaction = Queryable;

export type LogHandler = (
  tx: LogTransaction,
  events: LogEvent[],
  context: { group: string; partition: number },
) => Promise<void>;

export interface ConsumerOptions {
  group: string;
  partitions: number;
  handler: LogHandler;
  connection: string | ClientConfig;
  /**
   * Most events handed to the handler in one transaction (default 500), and what counts as a
   * backlog: a partition with a whole batch still waiting after one.
   */
  batchSize?: number;
  /**
   * Up to how many events a partition's batch grows to while it goes alone and its batches come
   * back full (BatchSizer, one per partition); default `batchSize`, so batches never grow.
   * Batches several partitions share stay at `batchSize`.
   */
  maxBatchSize?: number;
  /** How long a grown batch aims to take, from its read to its commit (default 500 ms). */
  batchTargetMs?: number;
  /** Longest idle wait between polls; appends wake consumers sooner through NOTIFY. */
  pollMs?: number;
  /** How often membership is counted and partitions are taken or given back. */
  rebalanceMs?: number;
  /** Tries of one event before it goes to the dead-letter table. */
  maxAttempts?: number;
  /**
   * Partitions one transaction takes events from (default 1). Above 1, a pass handles up to
   * this many leased partitions in one transaction, each partition's events in offset order
   * and the partitions one after another, and commits all their offsets with it: the fixed
   * cost of a batch is paid once for many partitions, so a member whose partitions each
   * hold a few events keeps up. The handler's context then names the first partition.
   */
  partitionsPerBatch?: number;
  onError?: (error: unknown) => void;
  /**
   * Called after a batch's transaction committed (never for a rolled-back one): the place
   * for side effects that must not run before the state is durable, such as enqueueing the
   * jobs that act on it. Errors are reported to `onError` and do not stop the consumer.
   */
  afterCommit?: (events: readonly LogEvent[], context: CommitContext) => void | Promise<void>;
}

/** What afterCommit is told of the batch that committed. */
export interface CommitContext {
  group: string;
  /** The batch's first partition. */
  partition: number;
  /** The partitions whose events the batch held. */
  partitions: readonly number[];
  /**
   * Whether those partitions are behind: after the batch, a whole batch or more still waited
   * on them (LogConsumer.behind).
   */
  behind: boolean;
}

export interface PartitionProgress {
  partition: number;
  committedOffset: number;
}

/**
 * One member of a consumer group. It leases partitions with session advisory locks on its
 * own connection, so a member that dies (even by SIGKILL) loses its leases with its
 * connection and the others take them over. For each leased partition it reads from the
 * committed offset and runs the handler in the transaction that commits the new offset.
 * The offset row is locked FOR UPDATE as well, so even two members that somehow both
 * believed they held a partition would apply each event once.
 */
export class LogConsumer {
  readonly group: string;
  private readonly groupKey: number;
  private readonly partitions: number;
  private readonly batchSize: number;
  private readonly maxBatchSize: number;
  private readonly batchTargetMs: number;
  /** Per partition: how many events its batches read when it goes alone (BatchSizer). */
  private readonly sizers = new Map<number, BatchSizer>();
  private readonly pollMs: number;
  private readonly rebalanceMs: number;
  private readonly maxAttempts: number;
  private readonly partitionsPerBatch: number;
  private readonly handler: LogHandler;
  private client: Client;
  private broken = false;
  private readonly owned = new Set<number>();
  /** Partitions whose last shared batch took a full share: they go alone next time. */
  private readonly backlogged = new Set<number>();
  /** Events each partition still had waiting after its last read (by the log's head as read then). */
  private readonly waitingAfter = new Map<number, number>();
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private lastRebalance = 0;
  /** An append was announced since the current pass began: do not go idle after it. */
  private notified = false;
  /** One connection carries leases and transactions, so its uses must not interleave. */
  private turn: Promise<unknown> = Promise.resolve();

  /**
   * What the handler queries through: the member's connection, where a statement with
   * parameters goes as a named statement (prepared once per connection, named by its text),
   * so PostgreSQL parses and plans each of the handler's statements once instead of in every
   * batch. Up to MAX_NAMED distinct texts; any beyond go unnamed.
   */
  private readonly handlerTx: LogTransaction = {
    query: (sql, params) => {
      const name = params !== undefined && params.length > 0 ? this.statementName(sql) : undefined;
      return name === undefined
        ? this.client.query(sql, params)
        : this.client.query({ name, text: sql, values: params });
    },
  };
  private readonly statementNames = new Map<string, string>();

  private statementName(sql: string): string | undefined {
    let name = this.statementNames.get(sql);
    if (name === undefined && this.statementNames.size < MAX_NAMED) {
      name = `log_handler_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
      this.statementNames.set(sql, name);
    }
    return name;
  }

  constructor(private readonly options: ConsumerOptions) {
    this.group = options.group;
    this.groupKey = groupLockKey(options.group);
    this.partitions = options.partitions;
    this.batchSize = options.batchSize ?? 500;
    this.maxBatchSize = Math.max(this.batchSize, options.maxBatchSize ?? this.batchSize);
    this.batchTargetMs = options.batchTargetMs ?? 500;
    this.pollMs = options.pollMs ?? 1000;
    this.rebalanceMs = options.rebalanceMs ?? 1000;
    this.maxAttempts = options.maxAttempts ?? 3;
    this.partitionsPerBatch = Math.max(1, options.partitionsPerBatch ?? 1);
    this.handler = options.handler;
    this.client = this.newClient();
  }

  private newClient(): Client {
    const { connection } = this.options;
    const client = new Client(
      withGenericPlans(typeof connection === 'string' ? { connectionString: connection } : connection),
    );
    // A lost connection also loses the leases; the loop reconnects and leases again.
    client.on('error', () => {
      this.broken = true;
    });
    return client;
  }

  /**
   * Whether these partitions (default: all this member leases) are behind: after their last
   * reads, they still had at least a whole batch waiting between them.
   */
  behind(partitions: Iterable<number> = this.owned): boolean {
    let waiting = 0;
    for (const partition of partitions)
      if (this.owned.has(partition)) waiting += this.waitingAfter.get(partition) ?? 0;
    return waiting >= this.batchSize;
  }

  /** Partitions this member holds right now. */
  ownedPartitions(): number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    await this.connect();
    this.running = true;
    await this.rebalance();
    this.loop = this.run();
  }

  private async connect(): Promise<void> {
    await this.client.connect();
    this.client.on('notification', () => {
      this.notified = true;
      this.wake?.();
    });
    await this.client.query(`LISTEN ${LOG_NOTIFY_CHANNEL}`);
    await this.client.query(
      `INSERT INTO consumer_offset (group_name, partition)
       SELECT $1, p FROM generate_series(0, $2::int - 1) AS p ON CONFLICT DO NOTHING`,
      [this.group, this.partitions],
    );
    await this.client.query('SELECT pg_advisory_lock_shared($1, $2)', [this.groupKey, MEMBERSHIP]);
  }

  private async reconnect(): Promise<void> {
    this.owned.clear();
    await this.client.end().catch(() => undefined);
    this.client = this.newClient();
    this.broken = false;
    await this.connect();
    await this.rebalanceNow();
  }

  /** Stops after the current batch and gives the leases back. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.client.end().catch(() => undefined);
    this.owned.clear();
  }

  /** Runs until every leased partition is caught up to its head (for tests and replay). */
  async processAvailable(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.pass(false);
      total += n;
      if (n === 0) return total;
    }
  }

  /**
   * One batch of every leased partition. With several partitions per transaction, those left
   * with a whole batch still waiting after their last read (a backlog) go one by one with the
   * whole batch size, where a batch of one partition folds many changes of the same records;
   * the others share transactions. A burst that only fills a partition's share of a shared
   * batch is no backlog: sent one by one, every partition would wait for all the others'
   * transactions (measured on bench e2e-latency: 16 single-partition batches of 20–60 events
   * in a row after each burst, about a second in which the last partition's events waited).
   */
  private async pass(untilStopped: boolean): Promise<number> {
    const owned = this.ownedPartitions();
    const shares = this.partitionsPerBatch > 1;
    const single = shares ? owned.filter((p) => this.backlogged.has(p)) : owned;
    const shared = shares ? owned.filter((p) => !this.backlogged.has(p)) : [];
    let handled = 0;
    for (const partition of single) {
      if (untilStopped && !this.running) return handled;
      handled += await this.processPartitions([partition]);
    }
    for (let i = 0; i < shared.length; i += this.partitionsPerBatch) {
      if (untilStopped && !this.running) return handled;
      handled += await this.processPartitions(shared.slice(i, i + this.partitionsPerBatch));
    }
    return handled;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (Date.now() - this.lastRebalance >= this.rebalanceMs) await this.rebalance();
        this.notified = false;
        const handled = await this.pass(true);
        if (handled === 0 && !this.notified && this.running) await this.idleWait();
      } catch (error) {
        this.options.onError?.(error);
        if (!this.running) break;
        await sleep(Math.min(this.pollMs, 1000));
        if (this.broken) await this.reconnect().catch((e: unknown) => this.options.onError?.(e));
      }
    }
  }

  private idleWait(): Promise<void> {
    const wait = Math.min(this.pollMs, Math.max(10, this.rebalanceMs - (Date.now() - this.lastRebalance)));
    return new Promise((resolve) => {
      const timer = setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  /**
   * Counts live members and moves toward an even share: gives back partitions above the
   * share, takes free ones below it. A dead member's partitions are free the moment its
   * connection closes.
   */
  rebalance(): Promise<void> {
    return this.exclusive(() => this.rebalanceNow());
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async rebalanceNow(): Promise<void> {
    this.lastRebalance = Date.now();
    const { rows } = await this.client.query<{ members: number }>(
      // Advisory locks are per database, but pg_locks shows the whole server: count only the
      // members of this database's group, or another database's consumers shrink our share.
      `SELECT count(DISTINCT pid)::int AS members FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [asOid(this.groupKey), asOid(MEMBERSHIP)],
    );
    const members = Math.max(1, rows[0]?.members ?? 1);
    const share = Math.ceil(this.partitions / members);
    const mine = this.ownedPartitions();
    while (mine.length > share) {
      const partition = mine.pop()!;
      // Forget it before unlocking, so what this member believes it owns is always held.
      this.owned.delete(partition);
      await this.client.query('SELECT pg_advisory_unlock($1, $2)', [this.groupKey, partition]);
    }
    if (this.owned.size >= share) return;
    // Start the search at a different place per member so they do not all race for partition 0.
    const start = Math.floor(Math.random() * this.partitions);
    for (let i = 0; i < this.partitions && this.owned.size < share; i++) {
      const partition = (start + i) % this.partitions;
      if (this.owned.has(partition)) continue;
      const got = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
        this.groupKey,
        partition,
      ]);
      if (got.rows[0]?.ok) this.owned.add(partition);
    }
  }

  /** Handles one batch of one partition in one transaction; returns the events consumed. */
  private processPartitions(partitions: number[]): Promise<number> {
    return this.exclusive(async () => {
      try {
        return await this.processPartitionsNow(partitions, false);
      } catch (error) {
        // The batch failed whole and was rolled back: taken again at once, event by event.
        if (error instanceof BatchFailed) {
          for (const partition of partitions) this.sizers.get(partition)?.failed();
          return this.processPartitionsNow(partitions, true);
        }
        throw error;
      }
    });
  }

  private sizerOf(partition: number): BatchSizer {
    let sizer = this.sizers.get(partition);
    if (sizer === undefined) {
      sizer = new BatchSizer(this.batchSize, this.maxBatchSize, this.batchTargetMs);
      this.sizers.set(partition, sizer);
    }
    return sizer;
  }

  /**
   * Handles one batch of one or several partitions in one transaction: their offset rows
   * locked in partition order, up to a batch of events read from them (shareOut: what each has
   * waiting, or shares of the batch in proportion to it), handled in
   * one call (partition after partition, each in offset order), and every partition's offset
   * committed with the state. A partition with a whole batch still waiting after this one (by
   * the log's head, as committed when read) is marked backlogged, and unmarked once it has not.
   */
  private async processPartitionsNow(partitions: number[], oneByOne: boolean): Promise<number> {
    const mine = partitions.filter((p) => this.owned.has(p));
    if (mine.length === 0) return 0;
    const began = performance.now();
    // A partition alone (a backlog, or no other to share with) reads what its sizer says; one
    // sharing a transaction, its share of the base size.
    const sizer = mine.length === 1 ? this.sizerOf(mine[0]!) : undefined;
    const limit = sizer?.limit ?? this.batchSize;
    const tx = this.client;
    await tx.query('BEGIN');
    try {
      const heads = await this.handlerTx.query<{
        partition: number;
        committed_offset: string;
        head: string | null;
      }>(
        `SELECT o.partition, o.committed_offset, h.next_offset - 1 AS head
           FROM consumer_offset o LEFT JOIN log_partition h ON h.partition = o.partition
          WHERE o.group_name = $1 AND o.partition = ANY($2::int[]) ORDER BY o.partition FOR UPDATE OF o`,
        [this.group, mine],
      );
      const waiting = heads.rows.map((h) => Math.max(0, Number(h.head ?? 0) - Number(h.committed_offset)));
      const limits = shareOut(limit, waiting);
      const { rows } = await this.handlerTx.query<LogEventRow>(
        `SELECT e.* FROM unnest($1::int[], $2::bigint[], $3::int[]) WITH ORDINALITY AS o(p, committed, n, i)
           CROSS JOIN LATERAL (
             SELECT ${LOG_EVENT_COLUMNS} FROM change_event
              WHERE partition = o.p AND "offset" > o.committed ORDER BY "offset" LIMIT o.n) e
          ORDER BY o.i, e."offset"`,
        [heads.rows.map((h) => h.partition), heads.rows.map((h) => h.committed_offset), limits],
      );
      const events = rows.map(toLogEvent);
      const taken = new Map<number, number>();
      for (const e of events) taken.set(e.partition, (taken.get(e.partition) ?? 0) + 1);
      heads.rows.forEach((h, i) => {
        const left = waiting[i]! - (taken.get(h.partition) ?? 0);
        this.waitingAfter.set(h.partition, left);
        if (left >= this.batchSize) this.backlogged.add(h.partition);
        else this.backlogged.delete(h.partition);
      });
      if (rows.length === 0) {
        await tx.query('COMMIT');
        return 0;
      }
      const context = { group: this.group, partition: events[0]!.partition };
      await this.handleBatch(events, context.partition, oneByOne);
      const last = new Map<number, number>();
      for (const e of events) last.set(e.partition, e.offset);
      const since = new Map(heads.rows.map((h) => [h.partition, h.committed_offset]));
      // The offsets move and the batch is journaled (consumer_batch) in one statement, the
      // transaction's last: its seq is taken once the handler's work holds its locks.
      await this.handlerTx.query(
        `WITH batch AS (SELECT nextval('consumer_batch_seq') AS seq),
         moved AS (
           UPDATE consumer_offset o SET committed_offset = t.committed, updated_at = now()
             FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS t(partition, committed, since)
            WHERE o.group_name = $1 AND o.partition = t.partition
           RETURNING t.partition, t.since, t.committed)
         INSERT INTO consumer_batch (group_name, seq, partition, since_offset, last_offset)
         SELECT $1, batch.seq, moved.partition, moved.since, moved.committed FROM moved, batch`,
        [this.group, [...last.keys()], [...last.values()], [...last.keys()].map((p) => since.get(p))],
      );
      await tx.query('COMMIT');
      sizer?.observe(events.length, limit, performance.now() - began);
      if (this.options.afterCommit) {
        try {
          const read = heads.rows.map((h) => h.partition);
          await this.options.afterCommit(events, { ...context, partitions: read, behind: this.behind(read) });
        } catch (error) {
          this.options.onError?.(error);
        }
      }
      return events.length;
    } catch (error) {
      await tx.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /**
   * The whole batch at once, with no savepoint (two round trips a batch saved): if the handler
   * fails, BatchFailed rolls the transaction back and processPartitions takes the same
   * partitions again `oneByOne`: event by event, each behind a savepoint, so one poison event
   * is tried `maxAttempts` times and then dead-lettered while the events around it still apply
   * and the partition moves on.
   */
  private async handleBatch(events: LogEvent[], partition: number, oneByOne: boolean): Promise<void> {
    const tx = this.client;
    const context = { group: this.group, partition };
    if (!oneByOne) {
      try {
        await this.handler(this.handlerTx, events, context);
        return;
      } catch (error) {
        // A deadlock or a serialization failure says nothing about the events: the whole
        // transaction is rolled back and the batch tried again after a pause, never dead-lettered.
        if (isTransient(error)) throw error;
        throw new BatchFailed(error);
      }
    }
    for (const event of events) {
      let lastError: unknown;
      for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
        await tx.query('SAVEPOINT one');
        try {
          await this.handler(this.handlerTx, [event], { group: this.group, partition: event.partition });
          await tx.query('RELEASE SAVEPOINT one');
          lastError = undefined;
          break;
        } catch (error) {
          if (isTransient(error)) throw error;
          lastError = error;
          await tx.query('ROLLBACK TO SAVEPOINT one');
        }
      }
      if (lastError !== undefined) await this.deadLetter(event, lastError);
    }
  }

  private async deadLetter(event: LogEvent, error: unknown): Promise<void> {
    const code = (error as { code?: unknown })?.code;
    await this.client.query(
      `INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id,
                                event_key, payload, error_code, error_message, attempts)
       VALUES (gen_random_uuid(), $1, 'log', $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (source, group_name, partition, "offset")
       DO UPDATE SET attempts = dead_letter.attempts + EXCLUDED.attempts, error_message = EXCLUDED.error_message,
                     status = 'open', resolved_at = NULL`,
      [
        event.workspaceId,
        this.group,
        event.partition,
        event.offset,
        event.connectionId,
        event.eventKey,
        // An error's message may quote what PostgreSQL cannot hold: written out, so the letter is kept.
        JSON.stringify(storableJson(event)),
        typeof code === 'string' ? storableText(code) : 'HandlerFailed',
        storableText(error instanceof Error ? error.message : String(error)),
        this.maxAttempts,
      ],
    );
  }
}

/** Distinct handler statements a member prepares; a handler building texts without end stays bounded. */
const MAX_NAMED = 500;

/** A batch's handler failed on something in the batch: it is taken again event by event. */
class BatchFailed extends Error {
  constructor(readonly reason: unknown) {
    super(`batch failed: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PostgreSQL errors that a retry of the same work can clear: deadlock, serialization failure, lock not available. */
const TRANSIENT_CODES = new Set(['40P01', '40001', '55P03']);

export function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

/**
 * How many of a batch's `budget` events each partition gives, from what each has waiting:
 * everything when it all fits, else shares in proportion to what waits (at least one for a
 * partition with anything waiting, as far as the budget goes). A workspace's changes are all on
 * one partition, so a batch shared by many partitions mostly holds one busy partition among
 * idle ones: an even split would give the busy one a sliver of the batch.
 */
export function shareOut(budget: number, waiting: readonly number[]): number[] {
  const total = waiting.reduce((sum, n) => sum + n, 0);
  if (total <= budget) return [...waiting];
  const shares = waiting.map((n) => (n === 0 ? 0 : Math.max(1, Math.floor((budget * n) / total))));
  let over = shares.reduce((sum, n) => sum + n, 0) - budget;
  // The minimum of one can overshoot: taken back from the largest shares.
  while (over > 0) {
    const largest = shares.indexOf(Math.max(...shares));
    shares[largest]!--;
    over--;
  }
  return shares;
}
