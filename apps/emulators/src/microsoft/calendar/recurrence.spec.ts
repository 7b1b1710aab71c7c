import { describe, expect, it } from 'vitest';
import { DeltaJournal } from '../delta';
import { GraphError } from '../graph-errors';
import { newEventId, occurrenceId, parseEventId } from './event-ids';
import { isOccurrenceDate, occurrenceDates, parseRecurrence } from './recurrence';
import { formatWall, instantToWall, wallMs, wallToInstant } from './time-zones';

const dates = (raw: unknown, limit = 50) => [...occurrenceDates(parseRecurrence(raw, 'UTC'))].slice(0, limit);

describe('occurrenceDates', () => {
  it('counts weekly intervals from the week holding the start date, on firstDayOfWeek', () => {
    // 2030-03-06 is a Wednesday; every second week, Monday and Wednesday, weeks starting Monday.
    expect(
      dates({
        pattern: {
          type: 'weekly',
          interval: 2,
          daysOfWeek: ['Wednesday', 'monday'],
          firstDayOfWeek: 'monday',
        },
        range: { type: 'numbered', startDate: '2030-03-06', numberOfOccurrences: 5 },
      }),
    ).toEqual(['2030-03-06', '2030-03-18', '2030-03-20', '2030-04-01', '2030-04-03']);
  });

  it('ends a daily series on its endDate, inclusive, and an endless one only when asked to stop', () => {
    expect(
      dates({
        pattern: { type: 'daily', interval: 3 },
        range: { type: 'endDate', startDate: '2030-02-25', endDate: '2030-03-06' },
      }),
    ).toEqual(['2030-02-25', '2030-02-28', '2030-03-03', '2030-03-06']);
    expect(
      dates(
        { pattern: { type: 'daily', interval: 1 }, range: { type: 'noEnd', startDate: '2030-01-01' } },
        400,
      ),
    ).toHaveLength(400);
  });

  it('refuses the patterns it does not emulate, and ranges that make no sense', () => {
    const refused = (raw: unknown) => {
      try {
        parseRecurrence(raw, 'UTC');
      } catch (error) {
        return error instanceof GraphError ? [error.status, error.message] : error;
      }
      return 'accepted';
    };
    expect(
      refused({
        pattern: { type: 'absoluteMonthly', interval: 1, dayOfMonth: 3 },
        range: { type: 'noEnd', startDate: '2030-01-03' },
      }),
    ).toEqual([
      400,
      "The emulator supports the daily and weekly recurrence patterns only, not 'absoluteMonthly'.",
    ]);
    expect(
      refused({
        pattern: { type: 'weekly', interval: 1 },
        range: { type: 'noEnd', startDate: '2030-01-03' },
      }),
    ).toEqual([400, 'A weekly recurrence pattern needs daysOfWeek.']);
    expect(
      refused({
        pattern: { type: 'daily', interval: 1 },
        range: { type: 'endDate', startDate: '2030-01-03', endDate: '2030-01-01' },
      }),
    ).toEqual([400, 'An endDate recurrence range needs an endDate on or after its startDate.']);
  });

  it('knows its own dates, and only those', () => {
    const r = parseRecurrence(
      {
        pattern: { type: 'weekly', interval: 1, daysOfWeek: ['friday'] },
        range: { type: 'numbered', startDate: '2030-03-01', numberOfOccurrences: 3 },
      },
      'UTC',
    );
    expect(
      ['2030-03-08', '2030-03-15', '2030-03-22', '2030-03-09'].map((d) => isOccurrenceDate(r, d)),
    ).toEqual([true, true, false, false]);
  });
});

describe('time zones and ids', () => {
  it('keeps a wall-clock time across a daylight-saving change', () => {
    const before = wallToInstant(wallMs('2030-03-08T10:00:00')!, 'America/Los_Angeles');
    const after = wallToInstant(wallMs('2030-03-11T10:00:00')!, 'America/Los_Angeles');
    expect([new Date(before).toISOString(), new Date(after).toISOString()]).toEqual([
      '2030-03-08T18:00:00.000Z',
      '2030-03-11T17:00:00.000Z',
    ]);
    expect(formatWall(instantToWall(after, 'Europe/Berlin'))).toBe('2030-03-11T18:00:00.0000000');
  });

  it('reads an occurrence id back into its series and date', () => {
    const master = newEventId();
    expect(parseEventId(occurrenceId(master, '2030-12-31'))).toEqual({
      masterId: master,
      date: '2030-12-31',
    });
    expect(parseEventId(master)).toEqual({ masterId: master });
    expect(() => parseEventId('not-an-id')).toThrow(GraphError);
  });
});

describe('DeltaJournal', () => {
  it('resumes a page that ended inside one entry, and reports removals after a round that began empty', () => {
    const journal = new DeltaJournal<number>();
    const expand = (c: { id: string; item?: number; initial: boolean }) =>
      c.item === undefined
        ? c.initial
          ? []
          : [{ kind: 'removed' as const, id: c.id, reason: 'deleted' as const }]
        : Array.from({ length: c.item }, (_, i) => ({ kind: 'item' as const, id: `${c.id}.${i}`, item: i }));
    const empty = journal.page(undefined, { pageSize: 2, expand });
    expect(empty).toMatchObject({ entries: [], next: { kind: 'delta' } });
    journal.put('a', 3);
    journal.put('b', 1);
    const pages: string[][] = [];
    let token = empty.next;
    for (;;) {
      const page = journal.page(token, { pageSize: 2, expand });
      pages.push(page.entries.map((e) => e.id));
      token = page.next;
      if (token.kind === 'delta') break;
    }
    expect(pages).toEqual([
      ['a.0', 'a.1'],
      ['a.2', 'b.0'],
    ]);
    journal.remove('b');
    expect(journal.page(token, { pageSize: 2, expand }).entries).toEqual([
      { kind: 'removed', id: 'b', reason: 'deleted' },
    ]);
  });
});
