import { describe, expect, it } from 'vitest';
import { batchCompute } from './batch';
import { InsightsEngine } from './insights-engine';
import { DAY, diff, HOUR, PaneTable, params, retraction } from './testing/insights-fixtures';
import { type InsightEmission, type InsightsParams, personId, type StepOutput } from './types';

const B = Date.parse('2026-03-02T00:00:00Z'); // a Monday: day B of the tests
const at = (days: number, hours = 0, minutes = 0): number => B + days * DAY + hours * HOUR + minutes * 60_000;

function engine(overrides: Partial<InsightsParams> = {}): InsightsEngine {
  const made = InsightsEngine.create(params(overrides));
  if (!made.ok) throw new Error(made.error.message);
  return made.value;
}

/** Steps every input, which must be accepted, into a strict results table. */
function run(e: InsightsEngine, inputs: unknown[], table = new PaneTable()): StepOutput {
  const all: StepOutput = { emissions: [], sideOutput: [] };
  for (const input of inputs) {
    const out = e.step(input);
    if (!out.ok) throw new Error(`${out.error.code}: ${out.error.message}`);
    table.apply(out.value.emissions);
    all.emissions.push(...out.value.emissions);
    all.sideOutput.push(...out.value.sideOutput);
  }
  return all;
}

/** A diff input; `unknown` so that the tests can send malformed ones too. */
const d = (x: unknown) => ({ type: 'diff', diff: x });
const wm = (eventTime: number, connectionId = 'gmail') => ({ type: 'watermark', connectionId, eventTime });
const connect = (eventTime: number, connectionId = 'gmail') => ({ type: 'connect', connectionId, eventTime });
const kinds = (emissions: InsightEmission[]) => emissions.map((e) => `${e.kind} ${e.windowEnd}`);

describe('InsightsEngine', () => {
  it("gives the seeds' example the same window result whatever the arrival order", () => {
    const [a, b, c, dd] = [1, 2, 3, 4].map((m) => diff('mail_in', at(0, 10, m)));
    const inOrder = new PaneTable();
    run(engine(), [connect(at(0)), d(a!), d(b!), d(c!), d(dd!), wm(at(1))], inOrder);
    const bLast = new PaneTable();
    const out = run(engine(), [connect(at(0)), d(a!), d(c!), d(dd!), d(b!), wm(at(1))], bLast);
    expect(kinds(out.emissions)).toEqual(['on_time 2026-03-02']);
    expect(bLast.through('2026-03-02')).toEqual(inOrder.through('2026-03-02'));
    expect(inOrder.get('p1', '2026-03-02')).toMatchObject({
      last7: { mailsIn: 4 },
      lastInboundAt: at(0, 10, 4),
    });
    // B after the window fired on time: a late pane replaces (and retracts) the on-time one.
    const afterFiring = new PaneTable();
    const e = engine();
    run(e, [connect(at(0)), d(a!), d(c!), d(dd!), wm(at(1))], afterFiring);
    const late = run(e, [d(b!)], afterFiring);
    expect(late.emissions).toMatchObject([
      { kind: 'late', windowEnd: '2026-03-02', retracts: { last7: { mailsIn: 3 } }, completeUpTo: at(1) },
    ]);
    expect(afterFiring.through('2026-03-02')).toEqual(inOrder.through('2026-03-02'));
    expect(e.stats()).toMatchObject({ accepted: 4, late: 1 });
  });

  it('sends a diff beyond the allowed lateness to the side output, counted, and changes nothing', () => {
    const e = engine();
    const table = new PaneTable();
    run(e, [connect(at(0)), d(diff('mail_in', at(0, 9))), wm(at(1))], table);
    const before = table.through('2026-12-31');
    // Day 0 ended at at(1); with 3 days allowed it closes for good at at(4).
    const out = run(e, [wm(at(4)), d(diff('mail_out', at(0, 11)))], table);
    expect(out.emissions).toEqual([]);
    expect(out.sideOutput).toMatchObject([{ reason: 'beyond_allowed_lateness', diff: { kind: 'mail_out' } }]);
    expect(e.stats()).toMatchObject({ beyondAllowedLateness: 1, accepted: 1 });
    expect(table.through('2026-12-31')).toEqual(before);
    expect(e.snapshot(personId('p1'), at(4)).metrics.lastOutboundAt).toBeNull();
    // Just inside the allowance is still a revision.
    const inside = run(e, [d(diff('mail_out', at(1, 23)))], table);
    expect(kinds(inside.emissions)).toEqual(['late 2026-03-03']);
  });

  it('moves nextMeetingAt when a meeting is cancelled or moved', () => {
    const e = engine();
    const first = diff('meeting', at(2, 10), { connection: 'calendar' });
    const second = diff('meeting', at(3, 10), { connection: 'calendar' });
    run(e, [connect(at(0), 'calendar'), d(first), d(second)]);
    const asOf = at(0, 12);
    expect(e.snapshot(personId('p1'), asOf).nextMeetingAt).toBe(at(2, 10));
    run(e, [d(retraction(first))]);
    expect(e.snapshot(personId('p1'), asOf).nextMeetingAt).toBe(at(3, 10));
    const moved = { ...second, eventTime: at(1, 9) };
    run(e, [d(retraction(second)), d(moved)]);
    expect(e.snapshot(personId('p1'), asOf).nextMeetingAt).toBe(at(1, 9));
    expect(e.snapshot(personId('p1'), at(1, 9)).nextMeetingAt).toBeNull();
    // Once held, it counts as a meeting in the windows.
    expect(e.snapshot(personId('p1'), at(1, 10)).metrics).toMatchObject({
      last7: { meetings: 1 },
      lastContactedVia: 'meeting',
    });
  });

  it('retracts a deleted mail from the counts, with a late pane that retracts the on-time one', () => {
    const e = engine();
    const table = new PaneTable();
    const kept = diff('mail_in', at(0, 9));
    const deleted = diff('mail_in', at(0, 10));
    run(e, [connect(at(0)), d(kept), d(deleted), wm(at(1))], table);
    expect(table.get('p1', '2026-03-02')?.last7.mailsIn).toBe(2);
    const out = run(e, [d(retraction(deleted))], table);
    expect(out.emissions).toMatchObject([
      {
        kind: 'late',
        retracts: { last7: { mailsIn: 2 } },
        metrics: { last7: { mailsIn: 1 }, lastInboundAt: at(0, 9) },
      },
    ]);
    // Deleting the last one leaves the day with no pane at all: the person has nothing.
    run(e, [d(retraction(kept))], table);
    expect(table.through('2026-12-31')).toEqual([]);
    expect(e.stats().persons).toBe(0);
  });

  it('lets a paused connection hold the watermark: on time waits, and resuming releases it', () => {
    const e = engine();
    const table = new PaneTable();
    run(e, [connect(at(0)), connect(at(0), 'calendar'), d(diff('mail_in', at(0, 9)))], table);
    run(e, [{ type: 'status', connectionId: 'calendar', status: 'paused' }], table);
    const held = run(e, [wm(at(2))], table);
    expect(held.emissions).toEqual([]);
    expect(e.watermark).toBe(at(0));
    expect(e.heldBy()).toMatchObject([{ connectionId: 'calendar', status: 'paused', watermark: at(0) }]);
    run(e, [{ type: 'status', connectionId: 'calendar', status: 'live' }], table);
    const released = run(e, [wm(at(2), 'calendar')], table);
    expect(released.emissions).toMatchObject([
      { kind: 'on_time', windowEnd: '2026-03-02', completeUpTo: at(2) },
    ]);
    expect(e.stats().lastFiredDay).toBe('2026-03-03');
  });

  it('fires early panes at most once per interval of processing time, replaced on time', () => {
    const e = engine({ earlyIntervalMs: 30_000 });
    const table = new PaneTable();
    run(e, [connect(at(0)), d(diff('mail_in', at(0, 9)))], table);
    const first = run(e, [{ type: 'tick', now: 1_000 }], table);
    expect(first.emissions).toMatchObject([
      { kind: 'early', metrics: { last7: { mailsIn: 1 } }, retracts: null },
    ]);
    const throttled = run(e, [d(diff('mail_in', at(0, 10))), { type: 'tick', now: 20_000 }], table);
    expect(throttled.emissions).toEqual([]);
    const second = run(e, [{ type: 'tick', now: 31_000 }], table);
    expect(second.emissions).toMatchObject([
      { kind: 'early', metrics: { last7: { mailsIn: 2 } }, retracts: { last7: { mailsIn: 1 } } },
    ]);
    const idle = run(e, [{ type: 'tick', now: 90_000 }], table);
    expect(idle.emissions).toEqual([]);
    const onTime = run(e, [wm(at(1))], table);
    expect(onTime.emissions).toMatchObject([
      { kind: 'on_time', metrics: { last7: { mailsIn: 2 } }, retracts: { last7: { mailsIn: 2 } } },
    ]);
  });

  it('nets a retraction that arrives before its addition', () => {
    const e = engine();
    const table = new PaneTable();
    const mail = diff('mail_out', at(0, 9), { people: ['p1', 'p2'] });
    run(e, [connect(at(0)), d(retraction(mail)), wm(at(1))], table);
    expect(table.through('2026-12-31')).toEqual([]);
    run(e, [d(mail)], table);
    expect(e.stats()).toMatchObject({ persons: 0, entries: 0 });
    expect(table.through('2026-12-31')).toEqual([]);
  });

  it('emits a pane only on days the result changes: when activity enters or leaves a window', () => {
    const e = engine();
    const table = new PaneTable();
    run(e, [connect(at(0)), d(diff('mail_in', at(0, 9))), wm(at(100))], table);
    expect(table.through('2026-12-31').map((p) => [p.windowEnd, p.metrics.trend])).toEqual([
      ['2026-03-02', 'warming'], // in
      ['2026-03-09', 'warming'], // leaves the 7-day window
      ['2026-04-01', 'cooling'], // leaves the 30-day window (leaving the 30 days before it changes nothing)
      ['2026-05-31', 'cold'], // leaves the 90-day window
    ]);
  });

  it('keeps the mail a reply answers while the reply is in a window that can still be revised', () => {
    const e = engine();
    const table = new PaneTable();
    const diffs = [
      diff('mail_in', at(0, 9), { thread: 'x' }),
      diff('mail_out', at(25, 9), { thread: 'x' }), // a reply after 25 days
    ];
    // Days up to 113 are closed for good at at(117); day 114 still takes a late diff, and its
    // 90-day window holds the reply of day 25, whose inbound mail is 114 days old.
    const late = diff('mail_in', at(114, 9));
    run(e, [connect(at(0)), ...diffs.map(d), wm(at(117)), d(late)], table);
    expect(table.get('p1', '2026-06-24')).toMatchObject({ replies90: 1, medianReplyMs90: 25 * DAY });
    const expected = batchCompute([...diffs, late], params(), e.lastFiredDay);
    expect(table.through('2026-12-31').map((p) => p.metrics)).toEqual(expected.map((p) => p.metrics));
  });

  it('refuses a bad input with a code, counts it, and leaves the state as it was', () => {
    const e = engine();
    run(e, [connect(at(0)), d(diff('mail_in', at(0, 9)))]);
    const before = e.snapshot(personId('p1'), at(1));
    const bad = [
      d({ ...diff('mail_in', at(0, 10)), sign: 0 }),
      d({ ...diff('mail_in', at(0, 10)), eventTime: -5 }),
      d({ ...diff('mail_in', at(0, 10)), personIds: [] }),
      d({ ...diff('mail_in', at(0, 10)), kind: 'call' }),
      d({ ...diff('mail_in', at(0, 10)), extra: 1 }),
      { type: 'watermark', connectionId: 'gmail' },
      'not an input',
    ];
    for (const input of bad) {
      const out = e.step(input);
      expect(out.ok ? null : out.error.code).toBe('InvalidInput');
    }
    const unknown = e.step(wm(at(1), 'nope'));
    expect(unknown.ok ? null : unknown.error.code).toBe('UnknownConnection');
    expect(e.snapshot(personId('p1'), at(1))).toEqual(before);
    expect(e.stats()).toMatchObject({ invalidInput: bad.length, accepted: 1, entries: 1 });
  });

  it('replaces what a person holds (activities moved to them by a merge): open days revised, closed ones kept', () => {
    const e = engine();
    const table = new PaneTable();
    // p1 has one mail on day 0; the watermark closes days for good up to day 6 (lateness 3).
    run(e, [connect(at(0)), d(diff('mail_in', at(0, 9))), wm(at(10))], table);
    const closed = table.get('p1', '2026-03-02');
    // A merge gives p1 another person's activities: a mail on day 1 (closed for good) and a
    // meeting on day 8 (a day still open to late diffs).
    const out = run(
      e,
      [
        {
          type: 'replace',
          personId: 'p1',
          contributions: [
            { kind: 'mail_in', eventTime: at(0, 9) },
            { kind: 'mail_out', eventTime: at(1, 12), threadId: 't' },
            { kind: 'meeting', eventTime: at(8, 15) },
          ],
        },
      ],
      table,
    );
    // The days still open (from day 7, 2026-03-09) are revised as late panes: day 7's (her
    // first mail leaves the 7-day window) now counts the moved mail in its 30 days, and day 8
    // gets one for the meeting. Day 0 keeps what it said.
    expect(kinds(out.emissions)).toEqual(['late 2026-03-09', 'late 2026-03-10']);
    expect(table.get('p1', '2026-03-09')).toMatchObject({ last30: { mailsIn: 1, mailsOut: 1, meetings: 0 } });
    expect(table.get('p1', '2026-03-02')).toEqual(closed);
    expect(table.get('p1', '2026-03-10')).toMatchObject({
      last30: { mailsIn: 1, mailsOut: 1, meetings: 1 },
      lastOutboundAt: at(1, 12),
      lastContactedAt: at(8, 15),
    });
    // Nothing was late or set aside: a replacement is no late event.
    expect(e.stats()).toMatchObject({ accepted: 1, late: 0, beyondAllowedLateness: 0 });
    expect(e.snapshot(personId('p1'), at(10)).metrics.last30).toEqual({
      mailsIn: 1,
      mailsOut: 1,
      meetings: 1,
    });
    // Replacing with nothing empties the person: the open days say so.
    run(e, [{ type: 'replace', personId: 'p1', contributions: [] }], table);
    expect(e.snapshot(personId('p1'), at(10)).metrics.lastContactedAt).toBeNull();
  });
});
