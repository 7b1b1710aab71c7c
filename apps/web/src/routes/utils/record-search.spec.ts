import { describe, expect, it } from 'vitest';
import { parseRecordSearch } from './record-search';

describe('parseRecordSearch', () => {
  it('keeps a known tab and a readable time', () => {
    expect(parseRecordSearch({ tab: 'history', asOf: '2026-11-02T10:00:00Z' })).toEqual({
      tab: 'history',
      asOf: '2026-11-02T10:00:00Z',
    });
  });

  it('drops an unknown tab and an unreadable time', () => {
    expect(parseRecordSearch({ tab: 'settings', asOf: 'last week', other: 1 })).toEqual({});
  });
});
