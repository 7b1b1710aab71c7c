import { mulberry32 } from '@syncline/core';
import {
  type ActivityDiff,
  type ActivityKind,
  batchPanes,
  DayCalendar,
  DEFAULT_PARAMS,
  type InsightMetrics,
  InsightsEngine,
  type InsightsParams,
  type PersonId,
  personId,
  TRENDS,
} from '@syncline/insights';
import { emit, log } from './support';

/**
 * The event-time windowing stage of issue 25, alone (no database): activities over 120 days
 * of a Berlin workspace (a DST change inside) reach it out of order, as a consumer of the log
 * would hand them over: 10 % late but within the allowed lateness (3 days), 1 % beyond it,
 * plus deletions, cancellations and moved meetings as -1/+1 diffs, with the watermarks of
 * three connections every 10 minutes of event time and a processing-time tick with each.
 * The time is that of `step` alone (the stage); the digest of its emissions is timed apart.
 * Checks, in the same run: the side output holds exactly the diffs meant to be beyond the
 * lateness, and the results table the emissions build (every retraction applied) equals the
 * batch computation over the accepted diffs. Single process, single core.
 */
const DAY = 86_400_000;
const HOUR = 3_600_000;
const STEP = 10 * 60_000;
const PARAMS: InsightsParams = { timeZone: 'Europe/Berlin', ...DEFAULT_PARAMS };
const LATENESS = PARAMS.allowedLatenessMs;

const KINDS: readonly ActivityKind[] = ['mail_in', 'mail_out', 'meeting'];

/**
 * The diffs in arrival order, as columns (as a consumer reads rows from the log, the diff
 * objects are made one at a time, not all held at once).
 */
class Arrivals {
  length = 0;
  readonly w: Float64Array;
  readonly t: Float64Array;
  readonly activity: Int32Array;
  readonly owner: Int32Array;
  readonly other: Int32Array;
  readonly kind: Uint8Array;
  readonly thread: Int8Array;
  readonly sign: Int8Array;
  readonly beyond: Uint8Array;

  constructor(
    capacity: number,
    private readonly ids: readonly PersonId[],
  ) {
    this.w = new Float64Array(capacity);
    this.t = new Float64Array(capacity);
    this.activity = new Int32Array(capacity);
    this.owner = new Int32Array(capacity);
    this.other = new Int32Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.thread = new Int8Array(capacity);
    this.sign = new Int8Array(capacity);
    this.beyond = new Uint8Array(capacity);
  }

  push(
    a: { w: number; t: number; activity: number; owner: number; other: number; kind: number; thread: number },
    sign: 1 | -1,
    beyond: boolean,
  ): void {
    const i = this.length++;
    this.w[i] = a.w;
    this.t[i] = a.t;
    this.activity[i] = a.activity;
    this.owner[i] = a.owner;
    this.other[i] = a.other;
    this.kind[i] = a.kind;
    this.thread[i] = a.thread;
    this.sign[i] = sign;
    this.beyond[i] = beyond ? 1 : 0;
  }

  diffAt(i: number): ActivityDiff {
    const owner = this.owner[i]!;
    const other = this.other[i]!;
    const kind = KINDS[this.kind[i]!]!;
    const thread = this.thread[i]!;
    return {
      activityId: `act-${this.activity[i]}`,
      personIds: other >= 0 ? [this.ids[owner]!, this.ids[other]!] : [this.ids[owner]!],
      kind,
      eventTime: this.t[i]!,
      sign: this.sign[i] as 1 | -1,
      sourceConnectionId: kind === 'meeting' ? 'calendar' : owner % 3 === 0 ? 'outlook' : 'gmail',
      ...(thread >= 0 ? { threadId: `th-${owner}-${thread}` } : {}),
    };
  }

  /** Indexes in arrival order: by the watermark at arrival. */
  order(): number[] {
    return Array.from({ length: this.length }, (_, i) => i).sort((a, b) => this.w[a]! - this.w[b]!);
  }
}

function workload(activities: number, persons: number, spanDays: number) {
  const calendar = DayCalendar.create(PARAMS.timeZone);
  if (!calendar.ok) throw new Error(calendar.error.message);
  const endOf = (t: number): number => calendar.value.endOfDay(calendar.value.dayOf(t));
  const random = mulberry32(25);
  const start = Date.UTC(2026, 0, 4, 23); // 2026-01-05 00:00 in Berlin
  const hex = (n: number): string =>
    Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  const ids = Array.from({ length: persons }, () =>
    personId(`${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`),
  );
  // Skewed: the busiest person has a few hundred activities, the mean is activities / persons.
  const pick = (): number => Math.floor(persons * random() ** 1.5);
  const arrivals = new Arrivals(Math.ceil(activities * 1.1) + 16, ids);
  /** Where a diff arrives relative to its day's end: on time, late within the lateness, or beyond. */
  const arriving = (t: number, onTime: number): { w: number; beyond: boolean } => {
    const r = random();
    if (r < 0.01) return { w: endOf(t) + (1.2 + random() * 1.8) * LATENESS, beyond: true };
    if (r < 0.11) return { w: endOf(t) + (0.1 + random() * 0.8) * LATENESS, beyond: false };
    return { w: onTime, beyond: false };
  };
  /** A later diff for the same day: clear of the lateness edge, so that which side it falls on is certain. */
  const later = (t: number, w: number): { w: number; beyond: boolean } => {
    const ratio = (w - endOf(t)) / LATENESS;
    if (ratio >= 0.95 && ratio < 1.1) return { w: endOf(t) + 0.9 * LATENESS, beyond: false };
    return { w, beyond: ratio >= 1.1 };
  };
  for (let i = 0; i < activities; i++) {
    const owner = pick();
    const r = random();
    const kind = r < 0.45 ? 0 : r < 0.85 ? 1 : 2;
    const t = start + Math.floor(random() * spanDays * DAY);
    let other = -1;
    if (kind !== 2 && random() < 0.1) other = pick();
    if (other === owner) other = -1;
    const thread = kind === 2 ? -1 : Math.floor(random() * 5);
    // Meetings are known before they start; mail is seen within half an hour of being sent.
    const lead = kind === 2 ? HOUR + random() * 10 * DAY : 0;
    const first = arriving(t, kind === 2 ? t - lead : t - 15 * 60_000 + random() * 30 * 60_000);
    const row = { w: first.w, t, activity: i, owner, other, kind, thread };
    arrivals.push(row, 1, first.beyond);
    const fate = random();
    if (fate < 0.02) {
      // Deleted (mail) or cancelled (meeting): a -1 some time later.
      const then = later(t, first.w + random() * 2 * DAY);
      arrivals.push({ ...row, w: then.w }, -1, then.beyond);
    } else if (kind === 2 && fate < 0.05 && lead > 2 * DAY && !first.beyond && first.w < t - lead / 2) {
      // Moved while still ahead: -1 at the old time, +1 at the new, together.
      const w = first.w + (random() * lead) / 2;
      const moved = Math.max(w + HOUR, t + Math.floor((random() - 0.25) * 4 * DAY));
      arrivals.push({ ...row, w }, -1, false);
      arrivals.push({ ...row, w, t: moved }, 1, false);
    }
  }
  return { start, arrivals };
}

const mix = (h: number, v: number): number => {
  let x = Math.imul(h ^ (v >>> 0), 0x9e3779b1);
  x = Math.imul(x ^ Math.floor(v / 4294967296), 0x85ebca77);
  return x ^ (x >>> 15);
};
const VIA = ['mail_in', 'mail_out', 'meeting'];
const stringHashes = new Map<string, number>();
function stringHash(s: string): number {
  let h = stringHashes.get(s);
  if (h === undefined) {
    h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = mix(h, s.charCodeAt(i));
    stringHashes.set(s, h);
  }
  return h;
}

/** Order-free digest of a results table: the sum of its panes' hashes, in two 32-bit lanes. */
class TableDigest {
  lanes = [0, 0];
  panes = 0;

  add(person: string, windowEnd: string, m: InsightMetrics, sign: 1 | -1): void {
    const key = mix(stringHash(person), stringHash(windowEnd));
    for (let lane = 0; lane < 2; lane++) {
      let h = mix(key, lane);
      for (const c of [m.last7, m.last30, m.last90]) h = mix(mix(mix(h, c.mailsIn), c.mailsOut), c.meetings);
      for (const v of [m.lastContactedAt, m.lastInboundAt, m.lastOutboundAt, m.medianReplyMs90])
        h = mix(h, v ?? -1);
      h = mix(mix(mix(h, m.replies90), VIA.indexOf(m.lastContactedVia ?? '')), TRENDS.indexOf(m.trend));
      this.lanes[lane] = (this.lanes[lane]! + sign * (h >>> 0)) >>> 0;
    }
    this.panes += sign;
  }

  equals(other: TableDigest): boolean {
    return this.panes === other.panes && this.lanes[0] === other.lanes[0] && this.lanes[1] === other.lanes[1];
  }
}

export async function run(
  args: { activities?: number; persons?: number; days?: number } = {},
): Promise<void> {
  const activities = args.activities ?? 1_000_000;
  const persons = args.persons ?? 100_000;
  const spanDays = args.days ?? 120;
  const generated = Date.now();
  const { start, arrivals } = workload(activities, persons, spanDays);
  const order = arrivals.order();
  let intendedBeyond = 0;
  for (let i = 0; i < arrivals.length; i++) intendedBeyond += arrivals.beyond[i]!;
  log(
    `insights: ${arrivals.length} diffs (${activities} activities, ${persons} people, ${spanDays} days), ` +
      `${intendedBeyond} meant beyond the lateness; generated in ${((Date.now() - generated) / 1000).toFixed(1)} s`,
  );

  const made = InsightsEngine.create(PARAMS);
  if (!made.ok) throw new Error(made.error.message);
  const engine = made.value;
  const CONNECTIONS = [
    ['calendar', 0],
    ['gmail', 10 * 60_000],
    ['outlook', 5 * 60_000],
  ] as const;
  // Emissions for days not yet final (early panes) are kept per day and left out at the end.
  const byDay = new Map<string, TableDigest>();
  let emissions = 0;
  let stageNs = 0n;
  const step = (input: unknown): void => {
    const began = process.hrtime.bigint();
    const out = engine.step(input);
    stageNs += process.hrtime.bigint() - began;
    if (!out.ok) throw new Error(`${out.error.code}: ${out.error.message}`);
    for (const e of out.value.emissions) {
      emissions++;
      const digest = byDay.get(e.windowEnd) ?? new TableDigest();
      byDay.set(e.windowEnd, digest);
      if (e.retracts) digest.add(e.personId, e.windowEnd, e.retracts, -1);
      if (e.metrics) digest.add(e.personId, e.windowEnd, e.metrics, 1);
    }
  };
  const loopBegan = process.hrtime.bigint();
  let watermark = start - DAY;
  for (const [connectionId, lag] of CONNECTIONS)
    step({ type: 'connect', connectionId, eventTime: watermark + lag });
  for (const i of order) {
    while (watermark + STEP <= arrivals.w[i]!) {
      watermark += STEP;
      for (const [connectionId, lag] of CONNECTIONS)
        step({ type: 'watermark', connectionId, eventTime: watermark + lag });
      step({ type: 'tick', now: watermark + 15 * 60_000 });
    }
    step({ type: 'diff', diff: arrivals.diffAt(i) });
  }
  const seconds = Number(stageNs) / 1e9;
  const loopSeconds = Number(process.hrtime.bigint() - loopBegan) / 1e9;
  const stats = engine.stats();
  log(
    `insights: stage ${seconds.toFixed(1)} s (loop with the results digest ${loopSeconds.toFixed(1)} s), ` +
      `${emissions} emissions; ${JSON.stringify({ ...stats, heldBy: undefined })}`,
  );

  const encoded = engine.encode();
  const statePersons = stats.persons;
  const lastDay = engine.lastFiredDay;

  const batchStarted = Date.now();
  const accepted: ActivityDiff[] = [];
  for (let i = 0; i < arrivals.length; i++) if (!arrivals.beyond[i]) accepted.push(arrivals.diffAt(i));
  const expected = new TableDigest();
  for (const pane of batchPanes(accepted, PARAMS, lastDay)) {
    expected.add(pane.personId, pane.windowEnd, pane.metrics, 1);
  }
  const streamed = new TableDigest();
  const through = new Date(lastDay * DAY).toISOString().slice(0, 10);
  for (const [day, digest] of byDay) {
    if (day > through) continue;
    streamed.panes += digest.panes;
    for (let lane = 0; lane < 2; lane++)
      streamed.lanes[lane] = (streamed.lanes[lane]! + digest.lanes[lane]!) >>> 0;
  }
  const sideOutputRight = stats.beyondAllowedLateness === intendedBeyond;
  log(
    `insights: batch ${((Date.now() - batchStarted) / 1000).toFixed(1)} s, ${expected.panes} panes through ${through}; ` +
      `stream ${streamed.panes}; side output ${stats.beyondAllowedLateness} (meant ${intendedBeyond})`,
  );

  emit({
    bench: 'insights',
    activities,
    activities_per_s: Math.round(activities / seconds),
    state_bytes_per_person: Math.round(encoded.length / statePersons),
    equal_to_batch: streamed.equals(expected) && sideOutputRight,
    diffs: arrivals.length,
    diffs_per_s: Math.round(arrivals.length / seconds),
    stage_seconds: Number(seconds.toFixed(2)),
    loop_seconds: Number(loopSeconds.toFixed(2)),
    late_revised: stats.late,
    side_output: stats.beyondAllowedLateness,
    emissions,
    panes: streamed.panes,
    state_bytes: encoded.length,
    state_persons: statePersons,
  });
}
