import { mulberry32 } from '@syncline/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchCompute } from './batch';
import { DayCalendar, dayLabel } from './day-calendar';
import { InsightsEngine } from './insights-engine';
import { DAY, diff, HOUR, type LivePane, PaneTable, params, retraction } from './testing/insights-fixtures';
import { ACTIVITY_KINDS, type ActivityDiff, type InsightEmission, type InsightsParams } from './types';

const BASE = Date.parse('2026-03-20T00:00:00Z'); // near DST changes in Europe, Chile and Lord Howe
const ZONES = ['UTC', 'Europe/Berlin', 'America/Santiago', 'Asia/Kolkata', 'Australia/Lord_Howe'];

const activity = fc.record({
  people: fc.subarray(['p1', 'p2', 'p3'], { minLength: 1 }),
  kind: fc.constantFrom(...ACTIVITY_KINDS),
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  thread: fc.constantFrom('t1', 't2', undefined),
  fate: fc.constantFrom('kept', 'kept', 'kept', 'deleted', 'moved'),
  movedBy: fc.integer({ min: -3 * 24, max: 3 * 24 }),
});

type Activity = typeof activity extends fc.Arbitrary<infer T> ? T : never;
const scenarioOf = (spanDays: fc.Arbitrary<number>, activities: fc.Arbitrary<Activity[]>) =>
  fc.record({
    zone: fc.constantFrom(...ZONES),
    spanDays,
    activities,
    /** How often a diff arrives as late as it still may: revisions right at the pruning horizon. */
    latest: fc.double({ min: 0, max: 1, noNaN: true }),
    stepHours: fc.integer({ min: 3, max: 48 }),
    /** How far the last watermark goes past the data: exits from windows and pruning need ~130 days. */
    drainDays: fc.constantFrom(0, 10, 140),
    seed: fc.integer(),
    restoreAt: fc.double({ min: 0, max: 1, noNaN: true }),
  });
const scenario = scenarioOf(fc.integer({ min: 1, max: 150 }), fc.array(activity, { maxLength: 30 }));
/** Long and busy: every day has entries, so a window reaching a folded-away day shows. */
const dense = scenarioOf(
  fc.integer({ min: 200, max: 260 }),
  fc.array(activity, { minLength: 150, maxLength: 250 }),
);
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function diffsOf(s: Scenario): ActivityDiff[] {
  const diffs: ActivityDiff[] = [];
  s.activities.forEach((a, i) => {
    // Ten-minute steps make equal times (and so ties) common.
    const t = BASE + Math.floor((a.at * s.spanDays * DAY) / 600_000) * 600_000;
    const options = { people: a.people, id: `a${i}`, ...(a.thread ? { thread: a.thread } : {}) };
    const added = diff(a.kind, t, options);
    diffs.push(added);
    if (a.fate === 'deleted') diffs.push(retraction(added));
    if (a.fate === 'moved') diffs.push(retraction(added), { ...added, eventTime: t + a.movedBy * HOUR });
  });
  return diffs;
}

/** Every diff arrives at a random watermark step that still accepts it, in random order, with ticks. */
function inputsOf(s: Scenario, p: InsightsParams, diffs: ActivityDiff[]): unknown[] {
  const calendar = DayCalendar.create(p.timeZone);
  if (!calendar.ok) throw new Error(calendar.error.message);
  const random = mulberry32(s.seed);
  const step = s.stepHours * HOUR;
  const start = BASE - 5 * DAY;
  const lastTime = Math.max(BASE, ...diffs.map((d) => d.eventTime));
  const steps = Math.ceil((lastTime + 2 * DAY - start) / step);
  const arriving: { at: number; key: number; d: ActivityDiff }[] = diffs.map((d) => {
    const closes = calendar.value.endOfDay(calendar.value.dayOf(d.eventTime)) + p.allowedLatenessMs;
    const lastStep = Math.min(steps, Math.floor((closes - 1 - start) / step));
    const at = random() < s.latest ? lastStep : Math.floor(random() * (lastStep + 1));
    return { at, key: random(), d };
  });
  arriving.sort((a, b) => a.at - b.at || a.key - b.key);
  const inputs: unknown[] = [
    { type: 'connect', connectionId: 'gmail', eventTime: start },
    { type: 'connect', connectionId: 'calendar', eventTime: start },
  ];
  let now = 0;
  let next = 0;
  for (let k = 0; k <= steps; k++) {
    for (const connectionId of random() < 0.5 ? ['gmail', 'calendar'] : ['calendar', 'gmail']) {
      inputs.push({ type: 'watermark', connectionId, eventTime: start + k * step });
    }
    for (; next < arriving.length && arriving[next]!.at === k; next++) {
      inputs.push({ type: 'diff', diff: arriving[next]!.d });
      now += Math.floor(random() * 20_000);
      if (random() < 0.5) inputs.push({ type: 'tick', now });
    }
  }
  const end = start + steps * step + s.drainDays * DAY;
  inputs.push({ type: 'watermark', connectionId: 'gmail', eventTime: end });
  inputs.push({ type: 'watermark', connectionId: 'calendar', eventTime: end });
  return inputs;
}

function runAll(p: InsightsParams, inputs: unknown[], restoreAt?: number) {
  const made = InsightsEngine.create(p);
  if (!made.ok) throw new Error(made.error.message);
  let engine = made.value;
  const table = new PaneTable();
  const emissions: InsightEmission[] = [];
  inputs.forEach((input, i) => {
    if (i === restoreAt) {
      const restored = InsightsEngine.decode(engine.encode(), p);
      if (!restored.ok) throw new Error(restored.error.message);
      engine = restored.value;
    }
    const out = engine.step(input);
    if (!out.ok) throw new Error(`${out.error.code}: ${out.error.message}`);
    table.apply(out.value.emissions);
    emissions.push(...out.value.emissions);
  });
  return { engine, table, emissions };
}

const comparable = (panes: readonly LivePane[]) => panes.map((p) => ({ ...p }));

function equalsBatch(s: Scenario): void {
  const p = params({ timeZone: s.zone });
  const diffs = diffsOf(s);
  const { engine, table } = runAll(p, inputsOf(s, p, diffs));
  const through = engine.lastFiredDay;
  expect(engine.stats().beyondAllowedLateness).toBe(0);
  const expected = batchCompute(diffs, p, through).map(({ personId, windowEnd, metrics }) => ({
    personId,
    windowEnd,
    metrics,
  }));
  expect(comparable(table.through(dayLabel(through)))).toEqual(expected);
}

// Each property runs in about a second alone; a machine busy with other suites can take several.
const PROPERTY_TIMEOUT_MS = 60_000;

describe('the windowing stage against the batch computation', () => {
  it(
    'gives the batch results for any arrival order and delay within the allowed lateness',
    () => {
      fc.assert(fc.property(scenario, equalsBatch), { numRuns: 150 });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'stays exact over long busy histories, where old days are folded away',
    () => {
      fc.assert(fc.property(dense, equalsBatch), { numRuns: 25 });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'is a fold: stopping anywhere, encoding and resuming gives the same emissions and the same state',
    () => {
      fc.assert(
        fc.property(scenario, (s) => {
          const p = params({ timeZone: s.zone });
          const inputs = inputsOf(s, p, diffsOf(s));
          const straight = runAll(p, inputs);
          const resumed = runAll(p, inputs, Math.floor(s.restoreAt * inputs.length));
          expect(resumed.emissions).toEqual(straight.emissions);
          expect(resumed.engine.encode()).toEqual(straight.engine.encode());
        }),
        { numRuns: 60 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
