import { describe, expect, it } from 'vitest';
import { OBJECT_TYPES } from './object-types';
import { Prng } from './prng';
import { RecordStore, type WriteSource } from './record-store';
import { parseSearchRequest, runSearch, SEARCH_LIMITS, type SearchRequest } from './search';

const source: WriteSource = { sourceType: 'INTEGRATION', sourceId: '5001' };
const T0 = Date.parse('2024-03-01T00:00:00.000Z');

function contacts(): RecordStore {
  const store = new RecordStore(OBJECT_TYPES.contacts, [], new Prng(1));
  const rows: Record<string, string>[] = [
    { email: 'ada@example.com', firstname: 'Ada', lifecyclestage: 'lead', score: '10' },
    { email: 'grace@example.com', firstname: 'Grace', lifecyclestage: 'customer', score: '30' },
    { email: 'alan@other.org', firstname: 'Alan', score: '20' },
    { email: 'edsger@example.com', firstname: 'Edsger', lifecyclestage: 'lead' },
  ];
  rows.forEach((row, i) => {
    const created = store.create(row, source, T0 + i * 60_000);
    if (!created.ok) throw new Error('seed failed');
  });
  return store;
}

function request(body: unknown): SearchRequest {
  const parsed = parseSearchRequest(body);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return parsed.value;
}

const names = (store: RecordStore, body: unknown) =>
  runSearch(store.all(), request(body), OBJECT_TYPES.contacts.queryProperties).results.map((r) =>
    r.properties.get('firstname'),
  );

const filter = (propertyName: string, operator: string, extra: Record<string, unknown> = {}) => ({
  filterGroups: [{ filters: [{ propertyName, operator, ...extra }] }],
});

describe('search', () => {
  const store = contacts();

  it('compares an epoch-ms filter value with an ISO date property', () => {
    const cutoff = String(T0 + 90_000);
    expect(names(store, filter('lastmodifieddate', 'GTE', { value: cutoff }))).toEqual(['Alan', 'Edsger']);
    expect(names(store, filter('createdate', 'LT', { value: String(T0 + 60_000) }))).toEqual(['Ada']);
    expect(
      names(
        store,
        filter('createdate', 'BETWEEN', { value: String(T0 + 60_000), highValue: String(T0 + 120_000) }),
      ),
    ).toEqual(['Grace', 'Alan']);
  });

  it('supports the documented operators', () => {
    expect(names(store, filter('lifecyclestage', 'EQ', { value: 'LEAD' }))).toEqual(['Ada', 'Edsger']);
    expect(names(store, filter('lifecyclestage', 'NEQ', { value: 'lead' }))).toEqual(['Grace', 'Alan']);
    expect(names(store, filter('score', 'GT', { value: '15' }))).toEqual(['Grace', 'Alan']);
    expect(names(store, filter('score', 'LTE', { value: '20' }))).toEqual(['Ada', 'Alan']);
    expect(names(store, filter('firstname', 'IN', { values: ['ada', 'alan'] }))).toEqual(['Ada', 'Alan']);
    expect(names(store, filter('firstname', 'NOT_IN', { values: ['ada', 'alan'] }))).toEqual([
      'Grace',
      'Edsger',
    ]);
    expect(names(store, filter('lifecyclestage', 'HAS_PROPERTY'))).toEqual(['Ada', 'Grace', 'Edsger']);
    expect(names(store, filter('lifecyclestage', 'NOT_HAS_PROPERTY'))).toEqual(['Alan']);
    expect(names(store, filter('email', 'CONTAINS_TOKEN', { value: '*@example.com' }))).toEqual([
      'Ada',
      'Grace',
      'Edsger',
    ]);
    expect(names(store, filter('email', 'NOT_CONTAINS_TOKEN', { value: '*@example.com' }))).toEqual(['Alan']);
  });

  it('ORs filter groups and ANDs the filters inside one', () => {
    const body = {
      filterGroups: [
        {
          filters: [
            { propertyName: 'lifecyclestage', operator: 'EQ', value: 'lead' },
            { propertyName: 'score', operator: 'HAS_PROPERTY' },
          ],
        },
        { filters: [{ propertyName: 'firstname', operator: 'EQ', value: 'Alan' }] },
      ],
    };
    expect(names(store, body)).toEqual(['Ada', 'Alan']);
  });

  it('sorts, then pages with an offset cursor', () => {
    const body = { sorts: [{ propertyName: 'score', direction: 'DESCENDING' }], limit: 2 };
    const first = runSearch(store.all(), request(body), []);
    expect(first.total).toBe(4);
    expect(first.results.map((r) => r.properties.get('firstname'))).toEqual(['Grace', 'Alan']);
    expect(first.nextAfter).toBe('2');
    const second = runSearch(store.all(), request({ ...body, after: first.nextAfter }), []);
    // Edsger has no score: records without the value sort last.
    expect(second.results.map((r) => r.properties.get('firstname'))).toEqual(['Ada', 'Edsger']);
    expect(second.nextAfter).toBeUndefined();
    expect(names(store, { sorts: ['-firstname'] })).toEqual(['Grace', 'Edsger', 'Alan', 'Ada']);
  });

  it('matches the free-text query and leaves archived records out', () => {
    const local = contacts();
    const ada = local.all()[0];
    if (!ada) throw new Error('no record');
    local.archive(ada.id, T0);
    expect(names(local, { query: 'example.com' })).toEqual(['Grace', 'Edsger']);
  });

  it('refuses what HubSpot refuses', () => {
    const tooManyGroups = { filterGroups: Array.from({ length: 6 }, () => ({ filters: [] })) };
    expect(parseSearchRequest(tooManyGroups)).toMatchObject({ ok: false, error: { code: 'INVALID' } });
    const sevenFilters = {
      filterGroups: [
        { filters: Array.from({ length: 7 }, () => ({ propertyName: 'a', operator: 'HAS_PROPERTY' })) },
      ],
    };
    expect(parseSearchRequest(sevenFilters).ok).toBe(false);
    const nineteen = {
      filterGroups: [6, 6, 6, 1].map((n) => ({
        filters: Array.from({ length: n }, () => ({ propertyName: 'a', operator: 'HAS_PROPERTY' })),
      })),
    };
    expect(parseSearchRequest(nineteen).ok).toBe(false);
    expect(parseSearchRequest({ limit: 201 }).ok).toBe(false);
    expect(
      parseSearchRequest({
        filterGroups: [{ filters: [{ propertyName: 'a', operator: 'LIKE', value: 'x' }] }],
      }).ok,
    ).toBe(false);
    expect(parseSearchRequest({ after: String(SEARCH_LIMITS.maxResults) })).toEqual({
      ok: false,
      error: { code: 'PAST_RESULT_LIMIT', after: 10_000 },
    });
    expect(request({}).limit).toBe(10);
  });

  it('stops at 10,000 results, and offers the next page only for the 400 it will get', () => {
    const big = new RecordStore(OBJECT_TYPES.contacts, [], new Prng(2));
    for (let i = 0; i < 10_050; i++) big.create({ firstname: `n${i}` }, source, T0);
    const page = runSearch(big.all(), request({ limit: 200, after: '9900' }), []);
    expect(page.total).toBe(10_050);
    expect(page.results).toHaveLength(100);
    expect(page.nextAfter).toBe('10000');
  });
});
