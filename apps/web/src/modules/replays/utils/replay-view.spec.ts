import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/errors';
import {
  applyConsequences,
  eventTimeOf,
  formatValue,
  fromLabel,
  pageOf,
  progressOf,
  runningReplayId,
} from './replay-view';

describe('progressOf', () => {
  it('waits, counts, then gives a percentage', () => {
    const p = (status: string, eventsTotal: number | null, eventsReplayed: number) =>
      progressOf({ status, progress: { eventsTotal, eventsReplayed } });
    expect(p('queued', null, 0)).toEqual({ percent: null, text: 'Waiting to start' });
    expect(p('running', null, 0)).toEqual({ percent: null, text: 'Counting events' });
    expect(p('running', 4000, 1000)).toEqual({ percent: 25, text: '1,000 of 4,000 events' });
    expect(p('succeeded', 0, 0).percent).toBe(100);
  });
});

describe('the report', () => {
  it('shows values as text', () => {
    expect([
      formatValue(null),
      formatValue(''),
      formatValue('CTO'),
      formatValue(3),
      formatValue(['a']),
    ]).toEqual(['(empty)', '(empty)', 'CTO', '3', '["a"]']);
  });

  it('pages a long list and clamps the page', () => {
    const items = Array.from({ length: 45 }, (_, i) => i);
    expect(pageOf(items, 1, 20)).toEqual({ items: items.slice(0, 20), pages: 3 });
    expect(pageOf(items, 3, 20).items).toEqual([40, 41, 42, 43, 44]);
    expect(pageOf(items, 9, 20).items).toEqual([40, 41, 42, 43, 44]);
    expect(pageOf([], 1, 20)).toEqual({ items: [], pages: 1 });
  });

  it('says what applying will do, only for what it changes', () => {
    expect(
      applyConsequences({
        changes: 2,
        created: 0,
        gone: 0,
        conflictsAppeared: 1,
        conflictsDisappeared: 0,
        linksMoved: 0,
        writes: 3,
      }),
    ).toEqual([
      'Change field values on 2 records.',
      'Open 1 conflict for people to settle.',
      'Write 3 changes to the connected systems.',
    ]);
    expect(
      applyConsequences({
        changes: 0,
        created: 0,
        gone: 0,
        conflictsAppeared: 0,
        conflictsDisappeared: 0,
        linksMoved: 0,
        writes: 0,
      }),
    ).toEqual([]);
  });
});

describe('requests', () => {
  it('reads the replay in the way from a 409 replay_running, and nothing from other errors', () => {
    const id = '0b9c2a7e-6f1d-4a53-9d1e-2f6f0d4f8a11';
    const running = new ApiError({
      status: 409,
      code: 'replay_running',
      message: 'busy',
      details: { replayId: id },
    });
    expect(runningReplayId(running)).toBe(id);
    expect(
      runningReplayId(new ApiError({ status: 409, code: 'replay_running', message: 'busy' })),
    ).toBeNull();
    expect(
      runningReplayId(new ApiError({ status: 400, code: 'validation_failed', message: 'x' })),
    ).toBeNull();
    expect(runningReplayId(new Error('x'))).toBeNull();
  });

  it('turns the picked local time into the ISO time the API takes', () => {
    expect(eventTimeOf('2026-12-04 03:00:00')).toBe(new Date(2026, 11, 4, 3, 0, 0).toISOString());
    expect(eventTimeOf('')).toBeNull();
    expect(eventTimeOf(null)).toBeNull();
    expect(eventTimeOf('soon')).toBeNull();
  });

  it('names where a replay starts', () => {
    expect(fromLabel('beginning')).toBe('From the beginning');
    expect(fromLabel({ eventTime: '2026-12-04T03:00:00.000Z' })).toMatch(/^From Dec 4, 2026/);
  });
});
