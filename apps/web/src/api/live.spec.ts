import { QueryClient } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { recordKeys } from '../modules/records/keys';
import { LIST_KEY_PREFIX, liveHandlers } from './live';

const ADA = '0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f';
const changed = (id: string, type: string, version: number) => JSON.stringify({ id, type, version });

describe('live updates', () => {
  let client: QueryClient;
  const invalidated = (key: readonly unknown[]) => client.getQueryState(key)?.isInvalidated ?? false;

  beforeEach(() => {
    vi.useFakeTimers();
    client = new QueryClient();
    client.setQueryData(recordKeys.detail('person', ADA), { id: ADA, version: 3 });
    client.setQueryData(recordKeys.history('person', ADA), { pages: [] });
    client.setQueryData(['records-list', 'person', { q: 'ada' }], { data: [] });
    client.setQueryData(['inbox-counts'], { conflicts: 1 });
    client.setQueryData(['conflicts', 'open'], { pages: [] });
    client.setQueryData(recordKeys.timeline('company', 'acme', ['meeting']), { pages: [] });
  });
  afterEach(() => vi.useRealTimers());

  it('invalidates the changed record at once, lists and inbox counts after the debounce', () => {
    const live = liveHandlers(client);
    live.recordChanged(changed(ADA, 'person', 4));
    expect(invalidated(recordKeys.detail('person', ADA))).toBe(true);
    expect(invalidated(recordKeys.history('person', ADA))).toBe(true);
    expect(invalidated(['records-list', 'person', { q: 'ada' }])).toBe(false);
    vi.advanceTimersByTime(300);
    expect(invalidated(['records-list', 'person', { q: 'ada' }])).toBe(true);
    expect(invalidated(['inbox-counts'])).toBe(true);
    expect(invalidated(['conflicts', 'open'])).toBe(true);
    // A person's change is on no timeline.
    expect(invalidated(recordKeys.timeline('company', 'acme', ['meeting']))).toBe(false);
  });

  it('leaves a record view that is already at the announced version (the page’s own edit)', () => {
    liveHandlers(client).recordChanged(changed(ADA, 'person', 3));
    expect(invalidated(recordKeys.detail('person', ADA))).toBe(false);
    expect(invalidated(recordKeys.history('person', ADA))).toBe(true);
  });

  it('reads lists once per window however many changes arrive, and timelines after an activity changed', () => {
    const live = liveHandlers(client);
    const spy = vi.spyOn(client, 'invalidateQueries');
    for (let n = 0; n < 50; n++) live.recordChanged(changed(`id-${n}`, 'meeting', n));
    vi.advanceTimersByTime(300);
    const listCalls = spy.mock.calls.filter(([filters]) => filters?.queryKey?.[0] === LIST_KEY_PREFIX[0]);
    expect(listCalls).toHaveLength(1);
    expect(invalidated(recordKeys.timeline('company', 'acme', ['meeting']))).toBe(true);
  });

  it('ignores malformed events, and a refetch invalidates everything', () => {
    const live = liveHandlers(client);
    live.recordChanged('not json');
    live.recordChanged(JSON.stringify({ id: ADA }));
    vi.advanceTimersByTime(300);
    expect(invalidated(['inbox-counts'])).toBe(false);
    live.refetch();
    expect(invalidated(recordKeys.detail('person', ADA))).toBe(true);
    expect(invalidated(['records-list', 'person', { q: 'ada' }])).toBe(true);
  });

  it('reads again what was read before the stream opened, once, after the debounce', () => {
    const live = liveHandlers(client);
    live.opened();
    live.opened();
    const spy = vi.spyOn(client, 'invalidateQueries');
    expect(invalidated(['conflicts', 'open'])).toBe(false);
    vi.advanceTimersByTime(300);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(invalidated(['conflicts', 'open'])).toBe(true);
    expect(invalidated(recordKeys.detail('person', ADA))).toBe(true);
    expect(invalidated(['records-list', 'person', { q: 'ada' }])).toBe(true);
  });

  it('drops a pending list refresh when disposed', () => {
    const live = liveHandlers(client);
    live.recordChanged(changed(ADA, 'person', 9));
    live.opened();
    live.dispose();
    vi.advanceTimersByTime(1_000);
    expect(invalidated(['inbox-counts'])).toBe(false);
  });
});
