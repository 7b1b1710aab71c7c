import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ActivityVersion, activityDiffs, contributionsOf } from './activity-contributions';

const mail = (
  direction: 'inbound' | 'outbound' | null,
  parties: [string, string][],
  values: Record<string, unknown> = {},
): ActivityVersion => ({
  activityId: 'mail-1',
  entityType: 'email_activity',
  values: { direction, sentAt: '2026-12-01T09:00:00Z', threadId: 't1', subject: 'Proposal', ...values },
  parties: parties.map(([role, personId]) => ({ role, personId })),
  sourceConnectionId: 'gmail',
});

const meeting = (
  parties: [string, string][],
  values: Record<string, unknown> = {},
  source = 'calendar',
): ActivityVersion => ({
  activityId: 'meeting-1',
  entityType: 'meeting',
  values: { startAt: '2026-12-10T15:00:00Z', status: 'confirmed', ...values },
  parties: parties.map(([role, personId]) => ({ role, personId })),
  sourceConnectionId: source,
});

const AT = Date.parse('2026-12-01T09:00:00Z');
const MEETING_AT = Date.parse('2026-12-10T15:00:00Z');

describe('contributionsOf', () => {
  it('counts an inbound mail for its sender and an outbound one for each recipient, never for our own people', () => {
    const ours = new Set(['dana']);
    expect(
      contributionsOf(
        mail('inbound', [
          ['from', 'ann'],
          ['to', 'dana'],
          ['cc', 'bob'],
        ]),
        ours,
      ),
    ).toEqual([{ person: 'ann', kind: 'mail_in', eventTime: AT, threadId: 't1' }]);
    expect(
      contributionsOf(
        mail('outbound', [
          ['from', 'dana'],
          ['to', 'ann'],
          ['cc', 'bob'],
          ['bcc', 'dana'],
        ]),
        ours,
      ),
    ).toEqual([
      { person: 'ann', kind: 'mail_out', eventTime: AT, threadId: 't1' },
      { person: 'bob', kind: 'mail_out', eventTime: AT, threadId: 't1' },
    ]);
  });

  it('times a mail by sentAt, else occurredAt; without a time or a direction it counts for nothing', () => {
    const received = mail('inbound', [['from', 'ann']], { sentAt: null, occurredAt: '2026-12-02T10:00:00Z' });
    expect(contributionsOf(received)[0]!.eventTime).toBe(Date.parse('2026-12-02T10:00:00Z'));
    expect(contributionsOf(mail('inbound', [['from', 'ann']], { sentAt: null }))).toEqual([]);
    expect(contributionsOf(mail(null, [['from', 'ann']]))).toEqual([]);
  });

  it('counts a meeting for its organizer and attendees at its start, once each, unless cancelled', () => {
    const held = meeting([
      ['organizer', 'dana'],
      ['attendee', 'ann'],
      ['attendee', 'ann'],
    ]);
    expect(contributionsOf(held)).toEqual([
      { person: 'ann', kind: 'meeting', eventTime: MEETING_AT, threadId: undefined },
      { person: 'dana', kind: 'meeting', eventTime: MEETING_AT, threadId: undefined },
    ]);
    expect(contributionsOf(meeting([['attendee', 'ann']], { status: 'cancelled' }))).toEqual([]);
  });
});

describe('activityDiffs', () => {
  it('a new mail adds, a deleted one takes back what it added', () => {
    const v = mail('inbound', [['from', 'ann']]);
    expect(activityDiffs(undefined, v)).toEqual([
      {
        activityId: 'mail-1',
        personIds: ['ann'],
        kind: 'mail_in',
        eventTime: AT,
        sign: 1,
        sourceConnectionId: 'gmail',
        threadId: 't1',
      },
    ]);
    expect(activityDiffs(v, undefined).map((d) => [d.personIds[0], d.sign])).toEqual([['ann', -1]]);
  });

  it('an edit that changes nothing counted (a subject, a read flag) gives no diff', () => {
    const v = mail('inbound', [['from', 'ann']]);
    expect(
      activityDiffs(v, { ...v, values: { ...v.values, subject: 'Re: Proposal', labelIds: ['INBOX'] } }),
    ).toEqual([]);
  });

  it('a moved meeting is −1 at the old start and +1 at the new; a cancelled one −1 for everyone', () => {
    const v = meeting([
      ['organizer', 'dana'],
      ['attendee', 'ann'],
    ]);
    const moved = meeting(
      [
        ['organizer', 'dana'],
        ['attendee', 'ann'],
      ],
      { startAt: '2026-12-11T15:00:00Z' },
      'outlook',
    );
    expect(
      activityDiffs(v, moved).map((d) => [d.personIds[0], d.sign, d.eventTime, d.sourceConnectionId]),
    ).toEqual([
      ['ann', -1, MEETING_AT, 'outlook'],
      ['ann', 1, Date.parse('2026-12-11T15:00:00Z'), 'outlook'],
      ['dana', -1, MEETING_AT, 'outlook'],
      ['dana', 1, Date.parse('2026-12-11T15:00:00Z'), 'outlook'],
    ]);
    const cancelled = { ...v, values: { ...v.values, status: 'cancelled' } };
    expect(activityDiffs(v, cancelled).map((d) => [d.personIds[0], d.sign])).toEqual([
      ['ann', -1],
      ['dana', -1],
    ]);
  });

  it('an attendee added or resolved to a person later adds for them alone', () => {
    const v = meeting([['organizer', 'dana']]);
    const invited = meeting([
      ['organizer', 'dana'],
      ['attendee', 'ann'],
    ]);
    expect(activityDiffs(v, invited).map((d) => [d.personIds[0], d.sign])).toEqual([['ann', 1]]);
  });

  it('over any history of versions, the diffs sum to what the last version counts', () => {
    const people = ['ann', 'bob', 'dana'];
    const version = fc.oneof(
      fc.constant(undefined),
      fc.record({
        meeting: fc.boolean(),
        direction: fc.constantFrom('inbound', 'outbound', null),
        day: fc.integer({ min: 1, max: 9 }),
        cancelled: fc.boolean(),
        thread: fc.constantFrom('t1', 't2', ''),
        parties: fc.array(
          fc.tuple(fc.constantFrom('from', 'to', 'cc', 'organizer', 'attendee'), fc.constantFrom(...people)),
          { maxLength: 5 },
        ),
      }),
    );
    fc.assert(
      fc.property(fc.array(version, { minLength: 1, maxLength: 8 }), fc.subarray(people), (history, ours) => {
        const versions = history.map((h): ActivityVersion | undefined =>
          h === undefined
            ? undefined
            : {
                activityId: 'a',
                entityType: h.meeting ? 'meeting' : 'email_activity',
                values: {
                  direction: h.direction,
                  sentAt: `2026-12-0${h.day}T09:00:00Z`,
                  startAt: `2026-12-0${h.day}T15:00:00Z`,
                  status: h.cancelled ? 'cancelled' : 'confirmed',
                  threadId: h.thread,
                },
                parties: h.parties.map(([role, personId]) => ({ role, personId })),
                sourceConnectionId: 'c',
              },
        );
        const ourSet = new Set(ours);
        const counts = new Map<string, number>();
        let previous: ActivityVersion | undefined;
        for (const v of versions) {
          for (const d of activityDiffs(previous, v, ourSet)) {
            const key = `${d.personIds[0]}|${d.kind}|${d.eventTime}|${d.threadId ?? ''}`;
            counts.set(key, (counts.get(key) ?? 0) + d.sign);
          }
          previous = v;
        }
        const expected = contributionsOf(versions.at(-1), ourSet).map(
          (c) => `${c.person}|${c.kind}|${c.eventTime}|${c.threadId ?? ''}`,
        );
        const held = [...counts].filter(([, n]) => n !== 0);
        expect(held.every(([, n]) => n === 1)).toBe(true);
        expect(held.map(([key]) => key).sort()).toEqual(expected.sort());
      }),
      { numRuns: 300 },
    );
  });
});
