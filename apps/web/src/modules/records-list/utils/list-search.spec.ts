import { describe, expect, it } from 'vitest';
import { parseListSearch, sourceProviders, toApiQuery } from './list-search';

describe('parseListSearch', () => {
  it('keeps what it can read and drops the rest', () => {
    expect(
      parseListSearch({ q: ' ada ', owner: 42, stage: '', updatedSince: '2026-11-01', sort: 'name', x: 1 }),
    ).toEqual({ q: 'ada', owner: '42', updatedSince: '2026-11-01', sort: 'name' });
    expect(parseListSearch({ sort: 'bogus', updatedSince: 'yesterday' })).toEqual({});
  });

  it('reads the last-contacted order and a trend, and drops an unknown trend', () => {
    expect(parseListSearch({ sort: '-lastContacted', trend: 'cold' })).toEqual({
      sort: '-lastContacted',
      trend: 'cold',
    });
    expect(parseListSearch({ trend: 'hot' })).toEqual({});
    expect(parseListSearch({ trend: 'Cold' })).toEqual({});
  });

  it('leaves the default order out of the URL', () => {
    expect(parseListSearch({ sort: '-updatedAt' })).toEqual({});
  });
});

describe('toApiQuery', () => {
  it('sends a date as the start of its day and the default order', () => {
    expect(toApiQuery({ updatedSince: '2026-11-01', stage: 'lead' }, true)).toEqual({
      q: undefined,
      owner: undefined,
      stage: 'lead',
      updatedSince: '2026-11-01T00:00:00Z',
      trend: undefined,
      sort: '-updatedAt',
    });
    expect(toApiQuery({ stage: 'lead' }, false).stage).toBeUndefined();
    expect(toApiQuery({ trend: 'cold', sort: '-lastContacted' }, true)).toMatchObject({
      trend: 'cold',
      sort: '-lastContacted',
    });
  });
});

describe('sourceProviders', () => {
  it('lists each provider once, without removed connections', () => {
    expect(
      sourceProviders([
        { provider: 'hubspot' },
        { provider: null },
        { provider: 'hubspot' },
        { provider: 'google-contacts' },
      ]),
    ).toEqual(['google-contacts', 'hubspot']);
  });
});
