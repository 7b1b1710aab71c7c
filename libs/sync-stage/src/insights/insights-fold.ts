import { ENTITY_CHANNEL, type ProviderKey, type Queryable } from '@syncline/core';
import {
  type ActivityDiff,
  DEFAULT_PARAMS,
  type InsightEmission,
  InsightsEngine,
  type InsightsParams,
  type SideOutputRecord,
  type StepOutput,
} from '@syncline/insights';
import type { TargetConnection } from '../connections';
import { groupBy, storedContributions } from './contributions';
import {
  INSIGHT_WRITE_PERIOD_MS,
  meetingsBegun,
  queueInsightWrites,
  refreshEntityInsights,
} from './entity-insights';
import { WATERMARKED_TYPES, type Watermark } from './watermark-event';

/** A connection of the workspace whose changes reach the log. */
export interface LiveConnection {
  id: string;
  provider: ProviderKey;
}

/**
 * The workspace's connections whose watermarks the insights wait for: every one that is not
 * disconnected (paused and failing ones hold the watermark, visibly), except one in dry run,
 * whose changes and watermarks go to the staging log until it is enabled.
 */
export async function liveConnections(tx: Queryable, workspaceId: string): Promise<LiveConnection[]> {
  const { rows } = await tx.query<LiveConnection>(
    `SELECT id, provider::text AS provider FROM connection
      WHERE workspace_id = $1 AND provider <> 'syncline' AND status <> 'disconnected' AND NOT dry_run
      ORDER BY id`,
    [workspaceId],
  );
  return rows;
}

export interface InsightsFoldOptions {
  /** IANA zone the days are cut in, until a workspace's `time_zone` event names its own. */
  timeZone: string;
  /** How long after a day's end (in watermark time) an activity still revises its results. */
  allowedLatenessMs?: number;
  /** How often at most a record's insight properties are written to one CRM (INSIGHT_WRITE_PERIOD_MS). */
  writePeriodMs?: number;
}

/** What the session needs of the workspace's connections. */
export interface InsightsConnections {
  /** The connections whose watermarks the workspace's waits for (liveConnections). */
  live(workspaceId: string): Promise<readonly LiveConnection[]>;
  /** The connections written to (the CRMs among them are told the insights). */
  targets(workspaceId: string): Promise<readonly TargetConnection[]>;
}

interface Cached {
  engine: InsightsEngine;
  version: string;
}

/** One workspace's engine inside a transaction, and what it emitted there. */
interface Open {
  engine: InsightsEngine;
  /** Its parameters: the zone its days are cut in is the workspace's. */
  params: InsightsParams;
  /** The zone a `time_zone` event put in force (null: none yet, the stage's default). */
  zone: string | null;
  /** The engine was folded again from the contributions: its panes replace all the workspace's. */
  replaced: boolean;
  version: string | null;
  panes: Map<string, InsightEmission>;
  sideOutput: SideOutputRecord[];
}

/**
 * The windowing stage (libs/insights) folded by the sync stage, in its transaction: its state
 * (`insights_state`), results (`insight_pane`) and side output (`insights_side_output`)
 * commit with the group's offsets, so a crash replays the batch into the state before it and a
 * fold of the log from zero rebuilds the same results.
 *
 * Inputs come in log order: the diffs of each part of a batch, then a watermark event alone
 * (watermarks are segments of their own, as policies are). A batch ends with a `tick` at the
 * latest ingest time of its events: early panes for the open day at each batch's end, so the
 * table holds every accepted activity once its batch commits. Which batches a fold met does not
 * change the results: the panes of closed days are the on-time and late ones, and the open
 * day's pane is recomputed for every person its windows can move.
 *
 * The decoded engine is kept between batches and reused while the row's version is the one
 * this process wrote (one workspace is one partition: one member folds it at a time).
 */
export class InsightsFold {
  private readonly cache = new Map<string, Cached>();
  private readonly params: InsightsParams;
  private readonly writePeriodMs: number;

  constructor(options: InsightsFoldOptions) {
    this.writePeriodMs = options.writePeriodMs ?? INSIGHT_WRITE_PERIOD_MS;
    this.params = {
      ...DEFAULT_PARAMS,
      timeZone: options.timeZone,
      allowedLatenessMs: options.allowedLatenessMs ?? DEFAULT_PARAMS.allowedLatenessMs,
      // Early panes at every batch's end (the tick): none are held back for a period.
      earlyIntervalMs: 0,
    };
  }

  session(tx: Queryable, connections: InsightsConnections): InsightsSession {
    return new InsightsSession(tx, this.params, this.cache, connections, this.writePeriodMs);
  }
}

/** Per workspace: records whose current insights may have moved, records the batch touched. */
interface Moved {
  results: Set<string>;
  touched: Set<string>;
}

export class InsightsSession {
  private readonly open = new Map<string, Open>();
  private readonly moved = new Map<string, Moved>();

  constructor(
    private readonly tx: Queryable,
    private readonly params: InsightsParams,
    private readonly cache: Map<string, Cached>,
    private readonly connections: InsightsConnections,
    private readonly writePeriodMs: number,
  ) {}

  private movedIn(workspaceId: string): Moved {
    let moved = this.moved.get(workspaceId);
    if (moved === undefined) {
      moved = { results: new Set(), touched: new Set() };
      this.moved.set(workspaceId, moved);
    }
    return moved;
  }

  /**
   * Records the batch placed or moved (people, companies, deals): one newly linked in a CRM is
   * owed its insight properties there.
   */
  touch(workspaceId: string, ids: Iterable<string>): void {
    const moved = this.movedIn(workspaceId);
    for (const id of ids) moved.touched.add(id);
  }

  async diffs(workspaceId: string, diffs: readonly ActivityDiff[]): Promise<void> {
    if (diffs.length === 0) return;
    // A future meeting moves no pane yet, but the record's next meeting.
    const moved = this.movedIn(workspaceId);
    for (const diff of diffs) for (const id of diff.personIds) moved.results.add(id);
    const open = await this.engineOf(workspaceId);
    for (const diff of diffs) this.take(open, open.engine.step({ type: 'diff', diff }));
  }

  /** Records whose activities moved (ContributionChanges.replaced): each replaced by what it counts for now. */
  async replace(workspaceId: string, ids: ReadonlySet<string>): Promise<void> {
    if (ids.size === 0) return;
    const moved = this.movedIn(workspaceId);
    for (const id of ids) moved.results.add(id);
    const open = await this.engineOf(workspaceId);
    const sorted = [...ids].sort();
    const byEntity = groupBy(await storedContributions(this.tx, workspaceId, sorted), (r) => r.entity_id);
    for (const id of sorted)
      this.take(
        open,
        open.engine.step({
          type: 'replace',
          personId: id,
          contributions: (byEntity.get(id) ?? []).map((r) => ({
            kind: r.kind,
            eventTime: r.event_time.getTime(),
            ...(r.thread_id === null ? {} : { threadId: r.thread_id }),
          })),
        }),
      );
  }

  /** A connection's watermark: its first one adds it to those the workspace's waits for. */
  /**
   * A new zone for the workspace's days: the windows are folded again from what every
   * activity counts for, cut in it, and the results replace the workspace's (as a rebuild).
   */
  async timeZone(change: { workspaceId: string; timeZone: string }): Promise<void> {
    const open = await this.engineOf(change.workspaceId);
    const same = open.params.timeZone === change.timeZone;
    open.zone = change.timeZone;
    if (same) return;
    open.params = { ...open.params, timeZone: change.timeZone };
    await this.rebuild(change.workspaceId, open);
  }

  async watermark(mark: Watermark): Promise<void> {
    const open = await this.engineOf(mark.workspaceId);
    const known = open.engine.connections().find((c) => c.connectionId === mark.connectionId);
    const closedBefore = open.engine.watermark > 0;
    const result = open.engine.step(
      known !== undefined
        ? { type: 'watermark', connectionId: mark.connectionId, eventTime: mark.at }
        : { type: 'connect', connectionId: mark.connectionId, eventTime: mark.at },
    );
    // A watermark behind the connection's last (a cursor reset to a full backfill) holds nothing back.
    if (!result.ok && result.error.code === 'WatermarkRegressed') return;
    this.take(open, result);
    const first = known === undefined || known.watermark <= 0;
    const allVouched = open.engine.connections().every((c) => c.watermark > 0);
    if (first && closedBefore && mark.at > 0 && allVouched) await this.rebuild(mark.workspaceId, open);
  }

  /**
   * A connection that joined after the workspace's days had closed delivered its backfill as
   * late, and what was older than the lateness went to the side output (a new mailbox's
   * history is no late mail). Once every connection has vouched for its backfill, the windows
   * are folded again from what every activity counts for now (activity_contribution holds all
   * of it, side output included), and the results replace the old ones. In log order, from
   * rows that are themselves a fold of the log: a fold from zero rebuilds at the same place.
   */
  private async rebuild(workspaceId: string, open: Open): Promise<void> {
    const connections = open.engine.connections();
    const fresh = unwrap(InsightsEngine.create(open.params));
    open.engine = fresh;
    open.panes.clear();
    open.replaced = true;
    for (const c of connections)
      this.take(open, fresh.step({ type: 'connect', connectionId: c.connectionId, eventTime: 0 }));
    const rows = await storedContributions(this.tx, workspaceId);
    for (const r of rows)
      this.take(
        open,
        fresh.step({
          type: 'diff',
          diff: {
            activityId: r.activity_id,
            personIds: [r.entity_id],
            kind: r.kind,
            eventTime: r.event_time.getTime(),
            sign: 1,
            sourceConnectionId: r.connection_id,
            ...(r.thread_id === null ? {} : { threadId: r.thread_id }),
          },
        }),
      );
    for (const c of connections)
      this.take(
        open,
        fresh.step({ type: 'watermark', connectionId: c.connectionId, eventTime: c.watermark }),
      );
  }

  /**
   * Ends the transaction's folding at the log's time `now`: early panes, the rows, then each
   * record's current insights (`entity_insight`: those the batch moved, and those whose next
   * meeting has begun in the workspaces of the batch) and the CRM writes they owe. Returns the
   * connections owed a push.
   */
  async finish(now: number, workspaceIds: Iterable<string>): Promise<string[]> {
    for (const [workspaceId, open] of this.open) {
      this.take(open, open.engine.step({ type: 'tick', now }));
      await this.save(workspaceId, open);
      const moved = this.movedIn(workspaceId);
      for (const e of open.panes.values()) moved.results.add(e.personId);
      if (open.replaced) {
        const { rows } = await this.tx.query<{ entity_id: string }>(
          'SELECT entity_id FROM entity_insight WHERE workspace_id = $1',
          [workspaceId],
        );
        for (const r of rows) moved.results.add(r.entity_id);
      }
    }
    const begun = await meetingsBegun(
      this.tx,
      [...new Set([...workspaceIds, ...this.moved.keys()])].sort(),
      now,
    );
    for (const [workspaceId, ids] of begun) for (const id of ids) this.movedIn(workspaceId).results.add(id);
    const owed = new Set<string>();
    for (const [workspaceId, moved] of [...this.moved].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const changed = await refreshEntityInsights(this.tx, workspaceId, [...moved.results], now);
      const owing = [...new Set([...changed, ...moved.touched])];
      if (owing.length === 0) continue;
      const targets = await this.connections.targets(workspaceId);
      for (const id of await queueInsightWrites(
        this.tx,
        workspaceId,
        owing,
        targets,
        now,
        this.writePeriodMs,
      ))
        owed.add(id);
    }
    return [...owed];
  }

  /** The transaction rolled back: engines it changed are ahead of the database. */
  abort(): void {
    for (const workspaceId of this.open.keys()) this.cache.delete(workspaceId);
  }

  private take(open: Open, result: ReturnType<InsightsEngine['step']>): void {
    const out: StepOutput = unwrap(result);
    for (const e of out.emissions) open.panes.set(`${e.personId}|${e.windowEnd}`, e);
    open.sideOutput.push(...out.sideOutput);
  }

  private async engineOf(workspaceId: string): Promise<Open> {
    const already = this.open.get(workspaceId);
    if (already !== undefined) return already;
    const { rows } = await this.tx.query<{ state: Buffer; version: string; time_zone: string | null }>(
      'SELECT state, version::text AS version, time_zone FROM insights_state WHERE workspace_id = $1',
      [workspaceId],
    );
    const row = rows[0];
    const zone = row?.time_zone ?? null;
    const params = zone === null ? this.params : { ...this.params, timeZone: zone };
    const cached = this.cache.get(workspaceId);
    let engine: InsightsEngine;
    if (row === undefined) engine = unwrap(InsightsEngine.create(params));
    else if (cached !== undefined && cached.version === row.version) engine = cached.engine;
    else engine = unwrap(InsightsEngine.decode(new Uint8Array(row.state), params));
    const open: Open = {
      engine,
      params,
      zone,
      replaced: false,
      version: row?.version ?? null,
      panes: new Map(),
      sideOutput: [],
    };
    this.open.set(workspaceId, open);
    await this.followConnections(workspaceId, open);
    return open;
  }

  /**
   * The connections the workspace's watermark waits for are those it has: one that reads
   * activities holds it from the start (at 0) until its first watermark, so a day does not
   * close before a mailbox still backfilling has delivered it; one gone no longer holds it.
   */
  private async followConnections(workspaceId: string, open: Open): Promise<void> {
    const live = (await this.connections.live(workspaceId)).filter(
      (c) => WATERMARKED_TYPES[c.provider].length > 0,
    );
    const ids = new Set(live.map((c) => c.id));
    const known = new Set(open.engine.connections().map((c) => c.connectionId));
    for (const id of known)
      if (!ids.has(id)) this.take(open, open.engine.step({ type: 'disconnect', connectionId: id }));
    for (const c of live)
      if (!known.has(c.id))
        this.take(open, open.engine.step({ type: 'connect', connectionId: c.id, eventTime: 0 }));
  }

  private async save(workspaceId: string, open: Open): Promise<void> {
    const { engine } = open;
    const stats = engine.stats();
    // A connection that has vouched for nothing yet holds the workspace at 0: that is no watermark.
    const instant = (ms: number) => (Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null);
    const watermark = instant(stats.watermark);
    const heldBy = stats.heldBy.map((c) => ({
      connectionId: c.connectionId,
      watermark: instant(c.watermark),
    }));
    const { rows } = await this.tx.query<{ version: string }>(
      `INSERT INTO insights_state (workspace_id, state, watermark, held_by, late, side_output, time_zone, version,
                                   updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, 1, now())
       ON CONFLICT (workspace_id) DO UPDATE
          SET state = EXCLUDED.state, watermark = EXCLUDED.watermark, held_by = EXCLUDED.held_by,
              late = EXCLUDED.late, side_output = EXCLUDED.side_output, time_zone = EXCLUDED.time_zone,
              version = insights_state.version + 1, updated_at = now()
       RETURNING version::text AS version`,
      [
        workspaceId,
        Buffer.from(engine.encode()),
        watermark,
        JSON.stringify(heldBy),
        stats.late,
        stats.beyondAllowedLateness,
        open.zone,
      ],
    );
    this.cache.set(workspaceId, { engine, version: rows[0]!.version });
    if (open.replaced) await this.tx.query('DELETE FROM insight_pane WHERE workspace_id = $1', [workspaceId]);
    await this.writePanes(workspaceId, [...open.panes.values()]);
    await this.writeSideOutput(workspaceId, open.sideOutput);
    await this.announce([...new Set([...open.panes.values()].map((e) => e.personId))]);
  }

  /**
   * People whose results moved are announced on commit as the views are (views.ts), at the
   * version they have: the stream's pages read the person's insights again, and a view
   * already at that version is not read again.
   */
  private async announce(personIds: readonly string[]): Promise<void> {
    if (personIds.length === 0) return;
    await this.tx.query(
      `SELECT pg_notify('${ENTITY_CHANNEL}', json_build_object('workspaceId', workspace_id, 'id', id,
              'type', entity_type, 'version', version)::text)
         FROM entity WHERE id = ANY($1::uuid[]) AND merged_into IS NULL`,
      [personIds],
    );
  }

  private async writePanes(workspaceId: string, emissions: readonly InsightEmission[]): Promise<void> {
    const gone = emissions.filter((e) => e.metrics === null);
    const kept = emissions.filter((e) => e.metrics !== null);
    if (gone.length > 0)
      await this.tx.query(
        `DELETE FROM insight_pane p USING jsonb_to_recordset($1::jsonb) AS r(entity_id uuid, window_end date)
          WHERE p.entity_id = r.entity_id AND p.window_end = r.window_end`,
        [JSON.stringify(gone.map((e) => ({ entity_id: e.personId, window_end: e.windowEnd })))],
      );
    if (kept.length === 0) return;
    await this.tx.query(
      `INSERT INTO insight_pane (entity_id, window_end, workspace_id, metrics, trigger)
       SELECT r.entity_id, r.window_end, $2, r.metrics, r.trigger
         FROM jsonb_to_recordset($1::jsonb) AS r(entity_id uuid, window_end date, metrics jsonb, trigger text)
       ON CONFLICT (entity_id, window_end) DO UPDATE SET metrics = EXCLUDED.metrics, trigger = EXCLUDED.trigger`,
      [
        JSON.stringify(
          kept.map((e) => ({
            entity_id: e.personId,
            window_end: e.windowEnd,
            metrics: e.metrics,
            trigger: e.kind,
          })),
        ),
        workspaceId,
      ],
    );
  }

  private async writeSideOutput(workspaceId: string, records: readonly SideOutputRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.tx.query(
      `INSERT INTO insights_side_output (workspace_id, activity_id, entity_id, kind, event_time, sign, reason, connection_id)
       SELECT $2, r.activity_id, r.entity_id, r.kind, r.event_time, r.sign, r.reason, r.connection_id
         FROM jsonb_to_recordset($1::jsonb) AS r(activity_id uuid, entity_id uuid, kind text, event_time timestamptz,
              sign int, reason text, connection_id uuid)`,
      [
        JSON.stringify(
          records.flatMap(({ reason, diff }) =>
            diff.personIds.map((person) => ({
              activity_id: diff.activityId,
              entity_id: person,
              kind: diff.kind,
              event_time: new Date(diff.eventTime).toISOString(),
              sign: diff.sign,
              reason,
              connection_id: diff.sourceConnectionId,
            })),
          ),
        ),
        workspaceId,
      ],
    );
  }
}

function unwrap<T>(
  result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } },
): T {
  if (!result.ok) throw new Error(`insights: ${result.error.code}: ${result.error.message}`);
  return result.value;
}
