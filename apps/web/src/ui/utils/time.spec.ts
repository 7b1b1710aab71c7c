import { describe, expect, it } from 'vitest';
import { relativeTime } from './time';

const NOW = Date.parse('2026-12-03T12:00:00Z');

describe('relativeTime', () => {
  it.each([
    ['2026-12-03T11:59:50Z', 'just now'],
    ['2026-12-03T11:55:00Z', '5 min ago'],
    ['2026-12-03T09:00:00Z', '3 h ago'],
    ['2026-12-01T12:00:00Z', '2 d ago'],
  ])('%s is %s', (iso, expected) => {
    expect(relativeTime(iso, NOW)).toBe(expected);
  });

  it('gives the date past a month, and text it cannot read back as it came', () => {
    expect(relativeTime('2026-01-15T12:00:00Z', NOW)).toBe('Jan 15, 2026');
    expect(relativeTime('not a time', NOW)).toBe('not a time');
  });
});
