import { DayCalendar, dayLabel } from './day-calendar';
import { EMPTY_METRICS, medianOf, metricsEqual, trendOf, WINDOW_DAYS } from './metrics';
import {
  ACTIVITY_KINDS,
  type ActivityDiff,
  type ActivityKind,
  type InsightMetrics,
  type InsightsParams,
  type PersonId,
  type WindowCounts,
} from './types';

export interface BatchPane {
  personId: PersonId;
  day: number;
  windowEnd: string;
  metrics: InsightMetrics;
}

interface LiveActivity {
  t: number;
  day: number;
  kind: ActivityKind;
  threadId: string | undefined;
}

/**
 * The reference the stream is tested against: the obvious computation, with all the diffs
 * at hand and nothing incremental. An activity is live for a person if its additions
 * outnumber its retractions; each day's result is computed from scratch over the live
 * activities in event-time order; a pane is kept where the result differs from the day
 * before, through `throughDay`. Diffs the stream put in its side output must be left out.
 */
export function batchCompute(
  diffs: readonly ActivityDiff[],
  params: InsightsParams,
  throughDay: number,
): BatchPane[] {
  return [...batchPanes(diffs, params, throughDay)];
}

export function* batchPanes(
  diffs: readonly ActivityDiff[],
  params: InsightsParams,
  throughDay: number,
): Generator<BatchPane> {
  const calendar = DayCalendar.create(params.timeZone);
  if (!calendar.ok) throw new Error(calendar.error.message);
  const net = new Map<string, { personId: PersonId; activity: LiveActivity; n: number }>();
  for (const d of diffs) {
    for (const personId of d.personIds) {
      const key = JSON.stringify([personId, d.activityId, d.kind, d.eventTime, d.threadId ?? null]);
      const known = net.get(key);
      if (known) known.n += d.sign;
      else {
        const activity = {
          t: d.eventTime,
          day: calendar.value.dayOf(d.eventTime),
          kind: d.kind,
          threadId: d.threadId,
        };
        net.set(key, { personId, activity, n: d.sign });
      }
    }
  }
  const byPerson = new Map<PersonId, LiveActivity[]>();
  for (const { personId, activity, n } of net.values()) {
    for (let i = 0; i < n; i++) {
      const list = byPerson.get(personId) ?? [];
      list.push(activity);
      byPerson.set(personId, list);
    }
  }
  for (const personId of [...byPerson.keys()].sort()) {
    const activities = byPerson.get(personId)!.sort((a, b) => a.t - b.t || order(a.kind) - order(b.kind));
    const replies = replyTimes(activities, params.maxReplyGapMs);
    const first = activities[0]!.day;
    // 90 days after the last activity every window is empty and nothing changes any more.
    const last = Math.min(throughDay, activities[activities.length - 1]!.day + 90);
    let previous = EMPTY_METRICS;
    for (let day = first; day <= last; day++) {
      const metrics = metricsOn(activities, replies, day);
      if (!metricsEqual(metrics, previous)) yield { personId, day, windowEnd: dayLabel(day), metrics };
      previous = metrics;
    }
  }
}

/** Per activity, its reply time if it is a reply: our mail whose previous mail in the thread is theirs. */
function replyTimes(activities: readonly LiveActivity[], maxReplyGapMs: number): (number | null)[] {
  return activities.map((a, i) => {
    if (a.kind !== 'mail_out' || a.threadId === undefined) return null;
    const previous = activities
      .slice(0, i)
      .filter((b) => b.kind !== 'meeting' && b.threadId === a.threadId)
      .at(-1);
    return previous?.kind === 'mail_in' && a.t - previous.t <= maxReplyGapMs ? a.t - previous.t : null;
  });
}

/** The definitions, one by one, over activities sorted by (time, kind). */
function metricsOn(
  activities: readonly LiveActivity[],
  replyMs: readonly (number | null)[],
  day: number,
): InsightMetrics {
  const windows = WINDOW_DAYS.map(() => ({ mailsIn: 0, mailsOut: 0, meetings: 0 }));
  const field = { mail_in: 'mailsIn', mail_out: 'mailsOut', meeting: 'meetings' } as const;
  let before30 = 0;
  let contacted: LiveActivity | undefined;
  let inbound: number | null = null;
  let outbound: number | null = null;
  const replies: number[] = [];
  activities.forEach((a, i) => {
    if (a.day > day) return;
    const age = day - a.day;
    WINDOW_DAYS.forEach((days, w) => {
      if (age < days) windows[w]![field[a.kind]]++;
    });
    if (age >= 30 && age < 60) before30++;
    // Latest time; on a tie a meeting, then our mail, then theirs.
    if (!contacted || a.t > contacted.t || (a.t === contacted.t && order(a.kind) > order(contacted.kind))) {
      contacted = a;
    }
    if (a.kind === 'mail_in') inbound = Math.max(inbound ?? a.t, a.t);
    if (a.kind === 'mail_out') outbound = Math.max(outbound ?? a.t, a.t);
    const reply = replyMs[i];
    if (age < 90 && reply !== null && reply !== undefined) replies.push(reply);
  });
  const [last7, last30, last90] = windows as [WindowCounts, WindowCounts, WindowCounts];
  const sum = (c: WindowCounts) => c.mailsIn + c.mailsOut + c.meetings;
  return {
    last7,
    last30,
    last90,
    lastContactedAt: contacted?.t ?? null,
    lastContactedVia: contacted?.kind ?? null,
    lastInboundAt: inbound,
    lastOutboundAt: outbound,
    replies90: replies.length,
    medianReplyMs90: medianOf(replies),
    trend: trendOf(sum(last30), before30, sum(last90)),
  };
}

const order = (k: ActivityKind): number => ACTIVITY_KINDS.indexOf(k);
