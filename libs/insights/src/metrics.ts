import { KIND_OF, type PersonState } from './person-state';
import type { InsightMetrics, Trend, WindowCounts } from './types';

export const WINDOW_DAYS = [7, 30, 90] as const;

const counts = (mailsIn = 0, mailsOut = 0, meetings = 0): WindowCounts => ({ mailsIn, mailsOut, meetings });

/** A person with nothing before the window's end. */
export const EMPTY_METRICS: InsightMetrics = Object.freeze({
  last7: counts(),
  last30: counts(),
  last90: counts(),
  lastContactedAt: null,
  lastContactedVia: null,
  lastInboundAt: null,
  lastOutboundAt: null,
  replies90: 0,
  medianReplyMs90: null,
  trend: 'cold',
});

/**
 * The trend rule, on engagement = mails in + mails out + meetings held; `recent` is the last
 * 30 days, `before` the 30 days before them.
 */
export function trendOf(recent: number, before: number, last90: number): Trend {
  if (last90 === 0) return 'cold'; // nothing in 90 days
  if (recent === 0 && before === 0) return 'cooling'; // only days 61-90 still hold something
  if (recent > before && recent * 4 >= before * 5) return 'warming'; // up 25 % or more
  if (recent < before && recent * 4 <= before * 3) return 'cooling'; // down 25 % or more
  return 'steady';
}

/** Median of durations; of an even count, the mean of the middle two rounded down. */
export function medianOf(values: number[]): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 === 1 ? values[mid]! : Math.floor((values[mid - 1]! + values[mid]!) / 2);
}

/** Scratch reused across calls (all synchronous): per-window counts and reply times. */
const c = new Float64Array(9); // [window][kind]
const replies: number[] = [];

/**
 * One person's metrics for the windows ending on `day`, counting entries on that day or
 * before and (for a point-in-time view) before `cutoff`. A reply (see Entry.reply: our mail
 * whose previous mail in its thread is theirs, within the reply gap) counts on its own day.
 */
export function computeMetrics(p: PersonState, day: number, cutoff: number): InsightMetrics {
  c.fill(0);
  let before30 = 0;
  const last = [p.floor[0], p.floor[1], p.floor[2]];
  replies.length = 0;
  for (const e of p.entries) {
    if (e.m <= 0 || e.day > day || e.t >= cutoff) continue;
    const age = day - e.day;
    if (e.t > last[e.kind]!) last[e.kind] = e.t;
    if (age < 90) {
      c[6 + e.kind]! += e.m;
      if (age < 30) {
        c[3 + e.kind]! += e.m;
        if (age < 7) c[e.kind]! += e.m;
      } else if (age < 60) before30 += e.m;
    }
    if (e.reply >= 0 && age < 90) replies.push(e.reply);
  }
  let via = -1;
  for (let k = 0; k < 3; k++) {
    // On a tie the later kind wins: a meeting, then our mail, then theirs.
    if (last[k]! >= 0 && (via < 0 || last[k]! >= last[via]!)) via = k;
  }
  const total = (w: number): number => c[w * 3]! + c[w * 3 + 1]! + c[w * 3 + 2]!;
  return {
    last7: counts(c[0], c[1], c[2]),
    last30: counts(c[3], c[4], c[5]),
    last90: counts(c[6], c[7], c[8]),
    lastContactedAt: via < 0 ? null : last[via]!,
    lastContactedVia: via < 0 ? null : KIND_OF[via]!,
    lastInboundAt: last[0]! < 0 ? null : last[0]!,
    lastOutboundAt: last[1]! < 0 ? null : last[1]!,
    replies90: replies.length,
    medianReplyMs90: medianOf(replies),
    trend: trendOf(total(1), before30, total(2)),
  };
}

const atDays = new Float64Array(12); // [kind][day, day - 7, day - 30, day - 90]

/**
 * Whether some window's count differs between the windows ending on `day` and on the day
 * before: then so do the results, and the day before need not be computed. Counts move by
 * what enters (on `day`) minus what leaves (7, 30 and 90 days back).
 */
export function windowCountsMove(p: PersonState, day: number): boolean {
  atDays.fill(0);
  for (const e of p.entries) {
    if (e.m <= 0) continue;
    const back = day - e.day;
    const slot = back === 0 ? 0 : back === 7 ? 1 : back === 30 ? 2 : back === 90 ? 3 : -1;
    if (slot >= 0) atDays[e.kind * 4 + slot]! += e.m;
  }
  for (let k = 0; k < 3; k++) {
    const entering = atDays[k * 4]!;
    if (entering !== atDays[k * 4 + 1] || entering !== atDays[k * 4 + 2] || entering !== atDays[k * 4 + 3]) {
      return true;
    }
  }
  return false;
}

const countsEqual = (a: WindowCounts, b: WindowCounts): boolean =>
  a.mailsIn === b.mailsIn && a.mailsOut === b.mailsOut && a.meetings === b.meetings;

export function metricsEqual(a: InsightMetrics | null, b: InsightMetrics | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    countsEqual(a.last7, b.last7) &&
    countsEqual(a.last30, b.last30) &&
    countsEqual(a.last90, b.last90) &&
    a.lastContactedAt === b.lastContactedAt &&
    a.lastContactedVia === b.lastContactedVia &&
    a.lastInboundAt === b.lastInboundAt &&
    a.lastOutboundAt === b.lastOutboundAt &&
    a.replies90 === b.replies90 &&
    a.medianReplyMs90 === b.medianReplyMs90 &&
    a.trend === b.trend
  );
}
