import { describe, expect, it } from 'vitest';
import { CalendarStore, type EventListQuery } from './calendar.store';
import { mergePatch } from './calendar-event';
import { GoogleApiError } from './google-errors';
import { SeededRandom } from './google-ids';

const query = (over: Partial<EventListQuery> = {}): EventListQuery => ({
  maxResults: 250,
  showDeleted: false,
  privateProperties: [],
  sharedProperties: [],
  ...over,
});

const body = (n: number, extra: Record<string, unknown> = {}) => ({
  summary: `E${n}`,
  start: { dateTime: '2030-01-01T10:00:00Z' },
  end: { dateTime: '2030-01-01T11:00:00Z' },
  ...extra,
});

function makeStore(seed = 7) {
  let now = Date.UTC(2030, 0, 1);
  let changes = 0;
  const store = new CalendarStore('dana@example.com', {
    rng: new SeededRandom(seed),
    now: () => now,
    onChange: () => changes++,
  });
  return { store, tick: (ms = 1000) => (now += ms), changes: () => changes };
}

const reasonOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    if (e instanceof GoogleApiError) return `${e.code} ${e.item.reason}`;
    throw e;
  }
  return undefined;
};

describe('CalendarStore.list', () => {
  it('walks fixed windows, so pages come out short or empty and only the last has a sync token', () => {
    const { store } = makeStore();
    const ids = Array.from({ length: 6 }, (_, n) => store.insert(body(n)).id);
    store.delete(ids[0]!);
    store.delete(ids[1]!);
    const first = store.list(query({ maxResults: 2 }), {});
    expect(first.items).toEqual([]);
    expect(first.nextPageToken).toBeDefined();
    expect(first.nextSyncToken).toBeUndefined();
    const second = store.list(query(), { pageToken: first.nextPageToken! });
    expect(second.items.map((e) => e.id)).toEqual(ids.slice(2, 4));
    const last = store.list(query(), { pageToken: second.nextPageToken! });
    expect(last.items.map((e) => e.id)).toEqual(ids.slice(4));
    expect(last.nextPageToken).toBeUndefined();
    expect(last.nextSyncToken).toBeDefined();
  });

  it('returns changes since a sync token, deletions as cancelled stubs, and 410 after invalidation', () => {
    const { store } = makeStore();
    const [a, b] = [store.insert(body(1)), store.insert(body(2))];
    const token = store.list(query(), {}).nextSyncToken!;
    store.patch(b.id, { summary: 'B2' });
    store.delete(a.id);
    const changes = store.list(query(), { syncToken: token });
    expect(changes.items).toEqual([
      { kind: 'calendar#event', etag: expect.stringMatching(/^"\d+"$/), id: a.id, status: 'cancelled' },
      expect.objectContaining({ id: b.id, summary: 'B2' }),
    ]);
    store.invalidateSyncTokens();
    expect(reasonOf(() => store.list(query(), { syncToken: changes.nextSyncToken! }))).toBe(
      '410 fullSyncRequired',
    );
    expect(reasonOf(() => store.list(query(), { syncToken: 'made-up' }))).toBe('410 fullSyncRequired');
  });

  it('filters full listings on extended properties, updatedMin and time range', () => {
    const { store, tick } = makeStore();
    store.insert(body(1, { extendedProperties: { private: { origin: 'syncline' } } }));
    tick(60_000);
    const later = store.insert(body(2, { start: { date: '2030-02-01' }, end: { date: '2030-02-02' } }));
    const ids = (q: Partial<EventListQuery>) =>
      store.list(query(q), {}).items.map((e) => (e as { summary?: string }).summary);
    expect(ids({ privateProperties: [['origin', 'syncline']] })).toEqual(['E1']);
    expect(ids({ updatedMin: Date.parse(later.updated) })).toEqual(['E2']);
    expect(ids({ timeMin: Date.UTC(2030, 0, 15) })).toEqual(['E2']);
    expect(ids({ timeMax: Date.UTC(2030, 0, 15) })).toEqual(['E1']);
  });
});

describe('CalendarStore writes', () => {
  it('validates client ids, refuses duplicates (deleted ones too) and stale etags', () => {
    const { store, changes } = makeStore();
    expect(reasonOf(() => store.insert(body(1, { id: 'abc' })))).toBe('400 invalid');
    expect(reasonOf(() => store.insert(body(1, { id: 'ABCDEF' })))).toBe('400 invalid');
    const event = store.insert(body(1, { id: 'v0id123' }));
    store.delete(event.id);
    expect(reasonOf(() => store.insert(body(1, { id: 'v0id123' })))).toBe('409 duplicate');
    expect(reasonOf(() => store.patch(event.id, { summary: 'x' }, event.etag))).toBe('412 conditionNotMet');
    expect(reasonOf(() => store.delete(event.id))).toBe('410 deleted');
    expect(changes()).toBe(2);
  });

  it('bumps the sequence when the time moves, and refuses an end before the start', () => {
    const { store } = makeStore();
    const event = store.insert(body(1));
    expect(store.patch(event.id, { summary: 'renamed' }).sequence).toBe(0);
    expect(store.patch(event.id, { end: { dateTime: '2030-01-01T12:00:00Z' } }).sequence).toBe(1);
    expect(reasonOf(() => store.patch(event.id, { end: { dateTime: '2030-01-01T09:00:00Z' } }))).toBe(
      '400 timeRangeEmpty',
    );
    expect(
      reasonOf(() => store.insert({ summary: 'no end', start: { dateTime: '2030-01-01T10:00:00Z' } })),
    ).toBe('400 required');
  });

  it('gives a local time in a named zone its offset', () => {
    const { store } = makeStore();
    const event = store.insert({
      start: { dateTime: '2030-07-01T10:00:00', timeZone: 'Europe/Paris' },
      end: { dateTime: '2030-07-01T11:00:00', timeZone: 'Europe/Paris' },
    });
    expect(event.start).toEqual({ dateTime: '2030-07-01T10:00:00+02:00', timeZone: 'Europe/Paris' });
  });

  it('makes the same ids and tokens for the same seed', () => {
    const run = () => {
      const { store } = makeStore(42);
      const id = store.insert(body(1)).id;
      return [id, store.list(query(), {}).nextSyncToken];
    };
    expect(run()).toEqual(run());
  });
});

describe('mergePatch', () => {
  it('merges objects, replaces arrays and clears on null', () => {
    expect(
      mergePatch(
        {
          extendedProperties: { private: { a: '1', b: '2' } },
          attendees: [{ email: 'x' }],
          location: 'here',
        },
        { extendedProperties: { private: { b: null, c: '3' } }, attendees: [], location: null },
      ),
    ).toEqual({ extendedProperties: { private: { a: '1', c: '3' } }, attendees: [] });
  });
});
