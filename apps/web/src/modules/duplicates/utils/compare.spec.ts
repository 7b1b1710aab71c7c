import { describe, expect, it } from 'vitest';
import { compareFields, sameValue, suggestedSurvivor } from './compare';

describe('compareFields', () => {
  it('puts known fields first, marks differences, and skips fields neither has', () => {
    const rows = compareFields(
      { email: 'ada@acme.com', firstName: 'Ada', jobTitle: '', custom: 1 },
      { email: 'ada@acme.com', firstName: 'Adah', jobTitle: null, phone: '+1 555' },
      ['firstName', 'lastName', 'email', 'phone', 'jobTitle'],
    );
    expect(rows.map((row) => [row.field, row.differs])).toEqual([
      ['firstName', true],
      ['email', false],
      ['phone', true],
      ['custom', true],
    ]);
  });
});

describe('sameValue', () => {
  it('treats empty alike and ignores key order and outer spaces', () => {
    expect(sameValue(null, '')).toBe(true);
    expect(sameValue(undefined, [])).toBe(true);
    expect(sameValue({ a: 1, b: [2] }, { b: [2], a: 1 })).toBe(true);
    expect(sameValue(' Ada ', 'Ada')).toBe(true);
    expect(sameValue(1, '1')).toBe(false);
  });
});

describe('suggestedSurvivor', () => {
  it('keeps the record more systems hold', () => {
    expect(suggestedSurvivor({ sourceLinks: [1] }, { sourceLinks: [1, 2] })).toBe('b');
    expect(suggestedSurvivor({ sourceLinks: [1] }, { sourceLinks: [1] })).toBe('a');
  });
});
