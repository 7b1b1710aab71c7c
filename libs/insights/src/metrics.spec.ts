import { describe, expect, it } from 'vitest';
import { computeMetrics, medianOf, trendOf } from './metrics';
import {
  addContribution,
  KIND_CODE,
  linkReplies,
  newPerson,
  type PersonState,
  threadKey,
} from './person-state';
import { DAY, HOUR } from './testing/insights-fixtures';
import { type ActivityKind, personId } from './types';

const GAP = 30 * DAY;
function person(activities: [ActivityKind, number, string?][]): PersonState {
  const p = newPerson(personId('p'));
  for (const [kind, t, thread] of activities) {
    addContribution(p, t, Math.floor(t / DAY), KIND_CODE[kind], threadKey(thread), 1);
  }
  linkReplies(p, GAP);
  return p;
}

describe('trendOf', () => {
  it.each([
    [0, 0, 0, 'cold'],
    [0, 0, 3, 'cooling'],
    [5, 4, 9, 'warming'],
    [4, 4, 8, 'steady'],
    [4, 5, 9, 'steady'],
    [3, 4, 7, 'cooling'],
    [1, 0, 1, 'warming'],
    [0, 1, 1, 'cooling'],
  ] as const)('recent %i, before %i, 90 days %i: %s', (recent, before, last90, trend) => {
    expect(trendOf(recent, before, last90)).toBe(trend);
  });
});

describe('medianOf', () => {
  it('takes the middle, or the mean of the middle two rounded down', () => {
    expect(medianOf([])).toBeNull();
    expect(medianOf([5, 1, 3])).toBe(3);
    expect(medianOf([4, 1, 2, 9])).toBe(3);
    expect(medianOf([1, 2])).toBe(1);
  });
});

describe('computeMetrics', () => {
  const day = 100;
  const t = (d: number, h = 12): number => d * DAY + h * HOUR;

  it('counts each window and the 30 days before the last 30', () => {
    const p = person([
      ['mail_in', t(day)],
      ['mail_out', t(day - 6)],
      ['meeting', t(day - 7)],
      ['mail_in', t(day - 29)],
      ['mail_in', t(day - 30)],
      ['mail_out', t(day - 59)],
      ['meeting', t(day - 89)],
      ['mail_in', t(day - 90)],
      ['mail_out', t(day + 1)], // after the window: not counted, not last
    ]);
    const m = computeMetrics(p, day, Number.POSITIVE_INFINITY);
    expect(m.last7).toEqual({ mailsIn: 1, mailsOut: 1, meetings: 0 });
    expect(m.last30).toEqual({ mailsIn: 2, mailsOut: 1, meetings: 1 });
    expect(m.last90).toEqual({ mailsIn: 3, mailsOut: 2, meetings: 2 });
    expect(m.trend).toBe('warming'); // 4 in the last 30 days against 2 before
    expect(m.lastInboundAt).toBe(t(day));
    expect(m.lastOutboundAt).toBe(t(day - 6));
    expect(m).toMatchObject({ lastContactedAt: t(day), lastContactedVia: 'mail_in' });
  });

  it('pairs a reply with the inbound mail just before it in its thread, within the gap', () => {
    const p = person([
      ['mail_in', t(day - 10, 9), 'x'],
      ['mail_in', t(day - 10, 10), 'x'], // the second of two: the reply answers this one
      ['mail_in', t(day - 10, 11), 'y'],
      ['mail_out', t(day - 10, 14), 'x'], // 4 h
      ['mail_out', t(day - 10, 15), 'x'], // follows our own mail: not a reply
      ['mail_out', t(day - 9, 11), 'y'], // 24 h
      ['mail_in', t(day - 80), 'z'],
      ['mail_out', t(day - 40), 'z'], // 40 days: over the gap
      ['mail_out', t(day - 8)], // no thread
    ]);
    const m = computeMetrics(p, day, Number.POSITIVE_INFINITY);
    expect(m.replies90).toBe(2);
    expect(m.medianReplyMs90).toBe(14 * HOUR);
  });

  it('breaks a tie on last contacted by kind: a meeting, then our mail, then theirs', () => {
    const p = person([
      ['mail_in', t(day)],
      ['mail_out', t(day)],
    ]);
    expect(computeMetrics(p, day, Number.POSITIVE_INFINITY).lastContactedVia).toBe('mail_out');
    addContribution(p, t(day), day, KIND_CODE.meeting, -1, 1);
    expect(computeMetrics(p, day, Number.POSITIVE_INFINITY).lastContactedVia).toBe('meeting');
  });

  it('shows nothing for a retraction whose addition has not arrived', () => {
    const p = newPerson(personId('p'));
    addContribution(p, t(day), day, KIND_CODE.mail_in, -1, -1);
    const m = computeMetrics(p, day, Number.POSITIVE_INFINITY);
    expect(m.last7.mailsIn).toBe(0);
    expect(m.lastContactedAt).toBeNull();
    addContribution(p, t(day), day, KIND_CODE.mail_in, -1, 1);
    expect(p.entries).toEqual([]);
  });
});
