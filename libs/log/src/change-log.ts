import { err, ok, type Result } from '@syncline/core';
import type { Pool } from 'pg';
import { partitionFor } from './partitioner';
import { type AppendValidationError, type PreparedChange, validateChanges } from './validate-changes';

export const LOG_NOTIFY_CHANNEL = 'syncline_log';

/**
 * Most rows in one INSERT, unless told otherwise. Appenders with many changes at hand (a
 * backfill's pages) give this many at once: a row costs the log about half in an INSERT of
 * 500 what it costs in one of 50.
 */
export const APPEND_BATCH_ROWS = 500;

export interface ChangeLogOptions {
  partitions: number;
  /** Longest a change waits for company before its batch is flushed. */
  flushMs?: number;
  /** Most rows in one INSERT. */
  maxBatchRows?: number;
  /** Flushes in flight at once, each over its own share of the partitions and its own connection. */
  lanes?: number;
}

export interface AppendedChange {
  eventKey: string;
  connectionId: string;
  /** false when the same (connection, event key) was already on the log. */
  isNew: boolean;
  partition: number;
  /** The offset given to a new change; null for a duplicate. */
  offset: number | null;
}

export type AppendError = AppendValidationError | { code: 'Closed'; message: string };

/** Runs one statement in the caller's transaction and returns its rows. */
export type TransactionQuery = <T>(text: string, values: unknown[]) => Promise<T[]>;

interface AppendedRow {
  connection_id: string;
  event_key: string;
  offset: number;
}

interface Pending {
  rows: PreparedRow[];
  results: (AppendedChange | undefined)[];
  remaining: number;
  resolve: (value: AppendedChange[]) => void;
  reject: (error: unknown) => void;
}

interface Lane {
  queue: PreparedRow[];
  busy: boolean;
}

interface PreparedRow extends PreparedChange {
  partition: number;
  owner: Pending;
  slot: number;
}

/**
 * One statement appends a batch: it locks the heads of the partitions the batch touches
 * (in partition order, so concurrent appenders cannot deadlock), gives each row the offset
 * head + its rank in its partition (ranked and de-duplicated in the batch by the caller),
 * inserts them, letting the unique (connection, event key) drop redeliveries, and advances
 * the heads. Because a head stays locked until commit, offsets within a partition become
 * visible in the order they were given, so a consumer reading "offset > committed" can
 * never skip a row. A dropped redelivery leaves its number unused: offsets increase but
 * are not dense.
 */
/**
 * The name the append goes under as a prepared statement: the log's own flushes use it, and so
 * may a caller of appendWithin that runs the query on a pool of its own (the text is always
 * APPEND_SQL, so one name serves them on the same connection).
 */
export const APPEND_STATEMENT = 'log.append';

const APPEND_SQL = `
WITH input AS (
  SELECT * FROM json_to_recordset($1::json)
    AS t(rank int, partition int, workspace_id uuid, connection_id uuid, event_key text, entity_type text,
         external_id text, op text, fields json, field_times json, event_time timestamptz, provider_version text,
         origin json)
),
heads AS (
  SELECT partition, next_offset FROM log_partition WHERE partition = ANY($2::int[]) ORDER BY partition FOR UPDATE
),
inserted AS (
  INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                            external_id, op, fields, field_times, event_time, provider_version, origin)
  SELECT i.partition, h.next_offset + i.rank - 1, i.workspace_id, i.connection_id, i.event_key, i.entity_type,
         i.external_id, i.op, i.fields, i.field_times, i.event_time, i.provider_version, i.origin
    FROM input i JOIN heads h USING (partition)
  ON CONFLICT (connection_id, event_key) DO NOTHING
  RETURNING connection_id, event_key, "offset"
),
advanced AS (
  UPDATE log_partition p SET next_offset = p.next_offset + c.n
    FROM unnest($2::int[], $3::int[]) AS c(partition, n)
   WHERE p.partition = c.partition
)
SELECT i.connection_id, i.event_key, i."offset"::float8 AS "offset"
  FROM inserted i
  CROSS JOIN (SELECT pg_notify('${LOG_NOTIFY_CHANNEL}', '')) AS wake`;

/**
 * The durable, ordered, replayable change log. `append` is idempotent on
 * (connection, event key) and goes through a micro-batcher: callers that arrive within
 * `flushMs` of each other share one INSERT and one commit.
 */
export class ChangeLog {
  readonly partitions: number;
  private readonly flushMs: number;
  private readonly maxBatchRows: number;
  private readonly lanes: Lane[];
  private readonly connectionWorkspace = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** The oldest queued change has waited flushMs: flush even a partial batch. */
  private due = false;
  private closed = false;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly pool: Pool,
    options: ChangeLogOptions,
  ) {
    this.partitions = options.partitions;
    this.flushMs = options.flushMs ?? 5;
    this.maxBatchRows = options.maxBatchRows ?? APPEND_BATCH_ROWS;
    this.lanes = Array.from({ length: Math.min(options.lanes ?? 2, this.partitions) }, () => ({
      queue: [],
      busy: false,
    }));
  }

  /**
   * Creates the partition heads on first use, and refuses to run with a partition count
   * other than the one the log was created with (that would reorder records).
   */
  async init(): Promise<void> {
    const { rows } = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM log_partition');
    const existing = rows[0]?.n ?? 0;
    if (existing === 0) {
      await this.pool.query(
        'INSERT INTO log_partition (partition) SELECT generate_series(0, $1::int - 1) ON CONFLICT DO NOTHING',
        [this.partitions],
      );
      return;
    }
    if (existing !== this.partitions) {
      throw new Error(
        `LOG_PARTITIONS is ${this.partitions} but the log was created with ${existing} partitions; changing it would reorder records`,
      );
    }
  }

  /** The partition a workspace's changes go to (all of them: see partitioner.ts). */
  partitionOf(change: { workspaceId: string }): number {
    return partitionFor(change.workspaceId, this.partitions);
  }

  /** Appends changes; reports for each whether it was new. A bad batch writes nothing. */
  async append(changes: readonly unknown[]): Promise<Result<AppendedChange[], AppendError>> {
    if (this.closed) return err({ code: 'Closed', message: 'the change log is closed' });
    const validated = validateChanges(changes);
    if (!validated.ok) return validated;
    if (validated.value.length === 0) return ok([]);
    const tenancy = await this.checkConnections(validated.value);
    if (!tenancy.ok) return tenancy;
    const pending = new Promise<AppendedChange[]>((resolve, reject) => {
      const owner: Pending = {
        rows: [],
        results: new Array(validated.value.length),
        remaining: validated.value.length,
        resolve,
        reject,
      };
      validated.value.forEach((prepared, slot) => {
        owner.rows.push({
          ...prepared,
          partition: this.partitionOf(prepared.change),
          owner,
          slot,
        });
      });
      this.enqueue(owner.rows);
    });
    return ok(await pending);
  }

  /**
   * Appends in the caller's transaction (`query` runs a statement in it), so that the changes
   * commit with the caller's other writes or not at all. The heads of the partitions it
   * touches stay locked until that transaction ends, holding up every other append to them:
   * for a few changes in a short transaction only (an admin's retry of one event).
   */
  async appendWithin(
    query: TransactionQuery,
    changes: readonly unknown[],
  ): Promise<Result<AppendedChange[], AppendError>> {
    if (this.closed) return err({ code: 'Closed', message: 'the change log is closed' });
    const validated = validateChanges(changes);
    if (!validated.ok) return validated;
    if (validated.value.length === 0) return ok([]);
    const tenancy = await this.checkConnections(validated.value);
    if (!tenancy.ok) return tenancy;
    const rows = validated.value.map((prepared) => ({
      ...prepared,
      partition: this.partitionOf(prepared.change),
    }));
    const inserted = await query<AppendedRow>(APPEND_SQL, appendValues(rows));
    return ok(appendedResults(rows, inserted));
  }

  /**
   * Every change must name a connection of its own workspace (tenant isolation). A
   * connection never changes workspace, so the answer is cached for the process's life;
   * this replaces a foreign key that cost every appended row a lookup.
   */
  private async checkConnections(changes: PreparedChange[]): Promise<Result<true, AppendValidationError>> {
    const unknown = [...new Set(changes.map((c) => c.change.connectionId))].filter(
      (id) => !this.connectionWorkspace.has(id),
    );
    if (unknown.length > 0) {
      const { rows } = await this.pool.query<{ id: string; workspace_id: string }>(
        'SELECT id, workspace_id FROM connection WHERE id = ANY($1::uuid[])',
        [unknown],
      );
      for (const r of rows) this.connectionWorkspace.set(r.id, r.workspace_id);
    }
    for (let index = 0; index < changes.length; index++) {
      const { connectionId, workspaceId } = changes[index]!.change;
      if (this.connectionWorkspace.get(connectionId) !== workspaceId) {
        return err({
          code: 'Validation',
          index,
          message: `change ${index}: connectionId: no connection ${connectionId} in workspace ${workspaceId}`,
        });
      }
    }
    return ok(true);
  }

  /** Flushes what is queued now and waits for every flush in flight. */
  async drain(): Promise<void> {
    while (this.lanes.some((l) => l.queue.length > 0 || l.busy)) {
      this.due = true;
      this.schedule();
      await new Promise<void>((resolve) => this.idle.add(resolve));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }

  private enqueue(rows: PreparedRow[]): void {
    for (const row of rows) this.lanes[row.partition % this.lanes.length]!.queue.push(row);
    this.schedule();
  }

  /**
   * Each lane owns the partitions p with p % lanes = lane, so flushes of different lanes
   * never wait on each other's partition locks and can use every core. A full batch goes
   * at once; at an idle lane a partial one waits at most flushMs for company; what queued
   * while a lane was busy goes the moment its flush ends (it has waited long enough).
   */
  private schedule(): void {
    let waiting = false;
    for (const lane of this.lanes) {
      if (!lane.busy && (lane.queue.length >= this.maxBatchRows || (this.due && lane.queue.length > 0))) {
        this.startFlush(lane);
      }
      if (lane.queue.length > 0) waiting = true;
    }
    if (!waiting) {
      this.due = false;
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
    } else if (!this.due) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.due = true;
        this.schedule();
      }, this.flushMs);
    }
  }

  private startFlush(lane: Lane): void {
    const batch = lane.queue.splice(0, this.maxBatchRows);
    lane.busy = true;
    void this.flush(batch).finally(() => {
      lane.busy = false;
      if (lane.queue.length > 0) this.startFlush(lane);
      this.schedule();
      if (this.lanes.every((l) => !l.busy && l.queue.length === 0)) {
        for (const wake of this.idle) wake();
        this.idle.clear();
      }
    });
  }

  private async flush(batch: PreparedRow[]): Promise<void> {
    try {
      const { rows } = await this.pool.query<AppendedRow>({
        // Named: each pooled connection parses and plans the statement once.
        name: APPEND_STATEMENT,
        text: APPEND_SQL,
        values: appendValues(batch),
      });
      const results = appendedResults(batch, rows);
      for (const [index, row] of batch.entries()) settle(row, results[index]!);
    } catch (error) {
      // A row the database refuses must not sink the other callers sharing its INSERT:
      // halve the batch until the bad row is alone.
      if (isRowError(error) && batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.flush(batch.slice(0, half));
        await this.flush(batch.slice(half));
        return;
      }
      for (const row of batch) row.owner.reject(error);
    }
  }
}

/**
 * APPEND_SQL's parameters for a batch. One JSON document carries it: a native stringify here
 * and a native parse in PostgreSQL, instead of a dozen array literals escaped value by value.
 * Redeliveries within the batch are dropped here and each row is ranked in its partition, so
 * the statement needs no sort.
 */
function appendValues(batch: readonly (PreparedChange & { partition: number })[]): unknown[] {
  const keys = new Set<string>();
  const ranks = new Map<number, number>();
  const parts: string[] = [];
  for (const row of batch) {
    const c = row.change;
    const key = `${c.connectionId}\u0000${c.eventKey}`;
    if (keys.has(key)) continue;
    keys.add(key);
    const rank = (ranks.get(row.partition) ?? 0) + 1;
    ranks.set(row.partition, rank);
    parts.push(
      `{"rank":${rank},"partition":${row.partition},"workspace_id":${JSON.stringify(c.workspaceId)},"connection_id":${JSON.stringify(
        c.connectionId,
      )},"event_key":${JSON.stringify(c.eventKey)},"entity_type":"${c.entityType}","external_id":${JSON.stringify(
        c.externalId,
      )},"op":"${c.op}","fields":${row.fieldsJson},"field_times":${row.fieldTimesJson},"event_time":"${c.eventTime.toISOString()}","provider_version":${JSON.stringify(
        c.providerVersion ?? null,
      )},"origin":${row.originJson ?? 'null'}}`,
    );
  }
  return [`[${parts.join(',')}]`, [...ranks.keys()], [...ranks.values()]];
}

/** What each change of a batch became: new with its offset, or a redelivery (a repeat within the batch too). */
function appendedResults(
  batch: readonly (PreparedChange & { partition: number })[],
  inserted: readonly AppendedRow[],
): AppendedChange[] {
  const offsets = new Map(inserted.map((r) => [`${r.connection_id}\u0000${r.event_key}`, r.offset]));
  const seen = new Set<string>();
  return batch.map((row) => {
    const key = `${row.change.connectionId}\u0000${row.change.eventKey}`;
    const offset = seen.has(key) ? undefined : offsets.get(key);
    seen.add(key);
    return {
      eventKey: row.change.eventKey,
      connectionId: row.change.connectionId,
      isNew: offset !== undefined,
      partition: row.partition,
      offset: offset ?? null,
    };
  });
}

function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

function settle(row: PreparedRow, result: AppendedChange): void {
  const owner = row.owner;
  owner.results[row.slot] = result;
  if (--owner.remaining === 0) owner.resolve(owner.results as AppendedChange[]);
}
