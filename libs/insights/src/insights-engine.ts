import { ok, type Result } from '@syncline/core';
import { DayCalendar, dayLabel } from './day-calendar';
import { type EngineState, type InsightsCounters, newEngineState } from './engine-state';
import { parseInput, parseParams } from './insights-input';
import { computeMetrics, EMPTY_METRICS, metricsEqual, windowCountsMove } from './metrics';
import {
  addContribution,
  KIND_CODE,
  linkReplies,
  NO_THREAD,
  newPerson,
  type PersonState,
  pruneDay,
  threadKey,
} from './person-state';
import { decodeState, encodeState } from './state-codec';
import type {
  ActivityDiff,
  InsightEmission,
  InsightMetrics,
  InsightsError,
  InsightsInput,
  InsightsParams,
  PersonId,
  ReplacedContribution,
  StepOutput,
} from './types';
import type { ConnectionWatermark } from './watermark-tracker';

/** A day's windows can change only where an entry enters (0) or leaves one (7, 30, 60, 90 days on). */
const CHANGE_OFFSETS = [0, 7, 30, 60, 90] as const;
const SHORTEST_DAY_MS = 23 * 3_600_000;

export interface PersonSnapshot {
  metrics: InsightMetrics;
  /** Earliest meeting still on that starts after `asOf`. */
  nextMeetingAt: number | null;
  completeUpTo: number;
}

export interface InsightsStats extends InsightsCounters {
  persons: number;
  entries: number;
  watermark: number;
  lastFiredDay: string | null;
  heldBy: ConnectionWatermark[];
}

const byId = (a: PersonState, b: PersonState): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The event-time windowing stage of one workspace, as a fold: `step(input)` is the only way
 * state changes, processing time is an input (`tick`), and the same inputs always give the
 * same emissions and the same encoded state. Results are a changelog keyed by (person, day):
 * a pane is emitted for a day only where the person's result differs from the day before, so
 * a person's result on any day is the latest pane on or before it.
 */
export class InsightsEngine {
  /** People with an entry per day: derived from the state, rebuilt on decode. */
  private readonly byDay = new Map<number, Set<PersonState>>();
  private readonly replyReachDays: number;

  private constructor(
    readonly params: InsightsParams,
    private readonly calendar: DayCalendar,
    private readonly s: EngineState,
  ) {
    this.replyReachDays = Math.ceil(params.maxReplyGapMs / SHORTEST_DAY_MS);
    for (const p of s.persons.values()) for (const e of p.entries) this.indexAdd(e.day, p);
  }

  static create(params: InsightsParams): Result<InsightsEngine, InsightsError> {
    return InsightsEngine.build(params, () => ok(newEngineState()));
  }

  /** Restores an engine from `encode()`; the params must be those it was encoded with. */
  static decode(bytes: Uint8Array, params: InsightsParams): Result<InsightsEngine, InsightsError> {
    return InsightsEngine.build(params, (p, calendar) => decodeState(bytes, p, calendar));
  }

  private static build(
    raw: InsightsParams,
    state: (p: InsightsParams, calendar: DayCalendar) => Result<EngineState, InsightsError>,
  ): Result<InsightsEngine, InsightsError> {
    const params = parseParams(raw);
    if (!params.ok) return params;
    const calendar = DayCalendar.create(params.value.timeZone);
    if (!calendar.ok) return calendar;
    const s = state(params.value, calendar.value);
    return s.ok ? ok(new InsightsEngine(params.value, calendar.value, s.value)) : s;
  }

  encode(): Uint8Array {
    return encodeState(this.s, this.params);
  }

  get watermark(): number {
    return this.s.tracker.watermark;
  }

  step(value: unknown): Result<StepOutput, InsightsError> {
    const parsed = parseInput(value);
    if (!parsed.ok) {
      this.s.counters.invalidInput++;
      return parsed;
    }
    return this.apply(parsed.value);
  }

  private apply(input: InsightsInput): Result<StepOutput, InsightsError> {
    const out: StepOutput = { emissions: [], sideOutput: [] };
    const tracker = this.s.tracker;
    switch (input.type) {
      case 'diff':
        this.applyDiff(input.diff, out);
        return ok(out);
      case 'tick':
        this.fireEarly(input.now, out);
        return ok(out);
      case 'replace':
        this.replacePerson(input.personId, input.contributions, out);
        return ok(out);
      case 'connect':
        tracker.connect(input.connectionId, input.eventTime);
        break;
      case 'watermark': {
        const advanced = tracker.advance(input.connectionId, input.eventTime);
        if (!advanced.ok) return advanced;
        break;
      }
      case 'status': {
        const set = tracker.setStatus(input.connectionId, input.status);
        if (!set.ok) return set;
        break;
      }
      case 'disconnect': {
        const removed = tracker.remove(input.connectionId);
        if (!removed.ok) return removed;
        break;
      }
    }
    this.fireOnTime(out);
    return ok(out);
  }

  private applyDiff(diff: ActivityDiff, out: StepOutput): void {
    const day = this.calendar.dayOf(diff.eventTime);
    this.s.tracker.observe(diff.sourceConnectionId, diff.eventTime);
    if (day < this.oldestOpenDay()) {
      this.s.counters.beyondAllowedLateness++;
      out.sideOutput.push({ reason: 'beyond_allowed_lateness', diff });
      return;
    }
    const late = day <= this.s.lastFiredDay;
    this.s.counters.accepted++;
    if (late) this.s.counters.late++;
    const kind = KIND_CODE[diff.kind];
    const thread = threadKey(diff.threadId);
    for (const id of diff.personIds) {
      let p = this.s.persons.get(id);
      if (!p) {
        p = newPerson(id);
        this.s.persons.set(id, p);
      }
      const before = late ? this.resultsOver(p, day - 1, this.s.lastFiredDay) : [];
      const change = addContribution(p, diff.eventTime, day, kind, thread, diff.sign);
      if (thread !== NO_THREAD) linkReplies(p, this.params.maxReplyGapMs, thread);
      if (change.dayAdded) this.indexAdd(day, p);
      if (change.dayEmptied) this.indexRemove(day, p);
      if (late) this.emitRevisions(p, day, before, this.resultsOver(p, day - 1, this.s.lastFiredDay), out);
      this.s.touched.add(p);
      this.dropIfEmpty(p);
    }
  }

  /**
   * Replaces what a person holds with `contributions`, none of them late: entries for days
   * still kept, the latest times per kind for days already folded away (as pruneDay keeps
   * them). The days still open to late diffs are revised (late panes, retracting the old); the
   * closed ones keep theirs; the open day's pane is recomputed at the next early firing.
   */
  private replacePerson(id: PersonId, contributions: readonly ReplacedContribution[], out: StepOutput): void {
    const fired = Number.isFinite(this.s.lastFiredDay);
    const from = this.oldestOpenDay();
    let p = this.s.persons.get(id);
    if (p === undefined) {
      p = newPerson(id);
      this.s.persons.set(id, p);
    }
    const before = fired ? this.resultsOver(p, from - 1, this.s.lastFiredDay) : [];
    for (const e of p.entries) this.indexRemove(e.day, p);
    p.entries = [];
    p.floor = [-1, -1, -1];
    const horizon = from - 92 - this.replyReachDays;
    for (const c of contributions) {
      const day = this.calendar.dayOf(c.eventTime);
      const kind = KIND_CODE[c.kind];
      if (fired && day < horizon) {
        if (c.eventTime > p.floor[kind]) p.floor[kind] = c.eventTime;
        continue;
      }
      if (addContribution(p, c.eventTime, day, kind, threadKey(c.threadId), 1).dayAdded)
        this.indexAdd(day, p);
    }
    linkReplies(p, this.params.maxReplyGapMs);
    if (fired) this.emitRevisions(p, from, before, this.resultsOver(p, from - 1, this.s.lastFiredDay), out);
    this.s.touched.add(p);
    this.dropIfEmpty(p);
  }

  /** Diffs for days before this one go to the side output: their windows are closed for good. */
  private oldestOpenDay(): number {
    const w = this.s.tracker.watermark;
    return this.calendar.lastEndedDay(w - this.params.allowedLatenessMs) + 1;
  }

  private resultsOver(p: PersonState, from: number, to: number): InsightMetrics[] {
    const results: InsightMetrics[] = [];
    for (let d = from; d <= to; d++) results.push(this.resultOf(p, d));
    return results;
  }

  private resultOf(p: PersonState, day: number): InsightMetrics {
    return computeMetrics(p, day, Number.POSITIVE_INFINITY);
  }

  /** The pane a day has: its result where it differs from the day before, else none. */
  private paneOn(p: PersonState, day: number): InsightMetrics | null {
    const result = this.resultOf(p, day);
    if (windowCountsMove(p, day)) return result;
    return metricsEqual(result, this.resultOf(p, day - 1)) ? null : result;
  }

  /** paneOn over results already computed for consecutive days. */
  private static paneOf(results: readonly InsightMetrics[], i: number): InsightMetrics | null {
    return metricsEqual(results[i]!, results[i - 1]!) ? null : results[i]!;
  }

  /** A late diff on `day`: every emitted day from it on whose pane changed, retracting the old one. */
  private emitRevisions(
    p: PersonState,
    day: number,
    before: readonly InsightMetrics[],
    after: readonly InsightMetrics[],
    out: StepOutput,
  ): void {
    for (let i = 1; i < after.length; i++) {
      const was = InsightsEngine.paneOf(before, i);
      const now = InsightsEngine.paneOf(after, i);
      if (!metricsEqual(was, now)) out.emissions.push(this.emission('late', p, day + i - 1, now, was));
    }
  }

  private fireOnTime(out: StepOutput): void {
    const target = this.calendar.lastEndedDay(this.s.tracker.watermark);
    if (target <= this.s.lastFiredDay) return;
    let day = this.s.lastFiredDay + 1;
    if (!Number.isFinite(day)) day = Math.min(...this.byDay.keys(), target + 1);
    for (; day <= target; day++) this.fireDay(day, out);
    this.s.lastFiredDay = target;
    // The next early firing computes the new open day for everyone whose windows it can move,
    // not only for people changed since: which early panes exist must not depend on when ticks
    // came (a fold of the same inputs with ticks elsewhere ends with the same panes).
    for (const back of CHANGE_OFFSETS)
      for (const p of this.byDay.get(target + 1 - back) ?? []) this.s.touched.add(p);
    this.prune();
  }

  private fireDay(day: number, out: StepOutput): void {
    const candidates = new Set<PersonState>(this.s.earlyPanes.keys());
    for (const back of CHANGE_OFFSETS) for (const p of this.byDay.get(day - back) ?? []) candidates.add(p);
    for (const p of [...candidates].sort(byId)) {
      const pane = this.paneOn(p, day);
      const early = this.s.earlyPanes.get(p) ?? null;
      if (pane !== null || early !== null) out.emissions.push(this.emission('on_time', p, day, pane, early));
    }
    const hadEarly = [...this.s.earlyPanes.keys()];
    this.s.earlyPanes.clear();
    for (const p of hadEarly) this.dropIfEmpty(p);
    this.s.lastFiredDay = day;
  }

  /** Early panes for the open day, for the people changed since the last, at most every interval. */
  private fireEarly(now: number, out: StepOutput): void {
    const { touched, earlyPanes } = this.s;
    if (now < this.s.lastEarlyAt + this.params.earlyIntervalMs) return;
    if (touched.size === 0 || !Number.isFinite(this.s.lastFiredDay)) return;
    const day = this.s.lastFiredDay + 1;
    for (const p of [...touched].sort(byId)) {
      const pane = this.paneOn(p, day);
      const previous = earlyPanes.get(p) ?? null;
      if (metricsEqual(pane, previous)) continue;
      out.emissions.push(this.emission('early', p, day, pane, previous));
      if (pane === null) earlyPanes.delete(p);
      else earlyPanes.set(p, pane);
    }
    touched.clear();
    this.s.lastEarlyAt = now;
  }

  /**
   * Folds away entries no revisable window reaches: older than the oldest open day by 90 days
   * (the widest window) plus the reply gap (a reply in a window looks back to the mail it answers).
   */
  private prune(): void {
    const horizon = this.oldestOpenDay() - 92 - this.replyReachDays;
    for (const [day, people] of this.byDay) {
      if (day >= horizon) continue;
      for (const p of people) {
        pruneDay(p, day, this.params.maxReplyGapMs);
        this.dropIfEmpty(p);
      }
      this.byDay.delete(day);
    }
  }

  private dropIfEmpty(p: PersonState): void {
    if (p.entries.length > 0 || p.floor.some((t) => t >= 0) || this.s.earlyPanes.has(p)) return;
    this.s.persons.delete(p.id);
    this.s.touched.delete(p);
  }

  private indexAdd(day: number, p: PersonState): void {
    let people = this.byDay.get(day);
    if (!people) {
      people = new Set();
      this.byDay.set(day, people);
    }
    people.add(p);
  }

  private indexRemove(day: number, p: PersonState): void {
    const people = this.byDay.get(day);
    if (!people) return;
    people.delete(p);
    if (people.size === 0) this.byDay.delete(day);
  }

  private emission(
    kind: InsightEmission['kind'],
    p: PersonState,
    day: number,
    metrics: InsightMetrics | null,
    retracts: InsightMetrics | null,
  ): InsightEmission {
    return {
      kind,
      personId: p.id,
      windowEnd: dayLabel(day),
      metrics,
      retracts,
      completeUpTo: this.s.tracker.watermark,
    };
  }

  /**
   * One person as of an instant given by the caller (never the wall clock): windows ending
   * on asOf's day, counting activities up to asOf. Exact for asOf within the kept horizon.
   */
  snapshot(id: PersonId, asOf: number): PersonSnapshot {
    const completeUpTo = this.s.tracker.watermark;
    const p = this.s.persons.get(id);
    if (!p) return { metrics: EMPTY_METRICS, nextMeetingAt: null, completeUpTo };
    const metrics = computeMetrics(p, this.calendar.dayOf(asOf), asOf + 1);
    const next = p.entries.find((e) => e.kind === KIND_CODE.meeting && e.m > 0 && e.t > asOf);
    return { metrics, nextMeetingAt: next?.t ?? null, completeUpTo };
  }

  /** Every connection the workspace's watermark waits for, with its own. */
  connections(): ConnectionWatermark[] {
    return this.s.tracker.list();
  }

  heldBy(): ConnectionWatermark[] {
    return this.s.tracker.heldBy();
  }

  stats(): InsightsStats {
    let entries = 0;
    for (const p of this.s.persons.values()) entries += p.entries.length;
    const last = this.s.lastFiredDay;
    return {
      ...this.s.counters,
      persons: this.s.persons.size,
      entries,
      watermark: this.s.tracker.watermark,
      lastFiredDay: Number.isFinite(last) ? dayLabel(last) : null,
      heldBy: this.s.tracker.heldBy(),
    };
  }

  /** The last day emitted on time, as a day number (for comparisons with batchCompute). */
  get lastFiredDay(): number {
    return this.s.lastFiredDay;
  }
}
