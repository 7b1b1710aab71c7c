import { describe, expect, it } from 'vitest';
import { Lru } from './lru';

const cache = (capacity: number, maxWeight?: number) => {
  const evicted: string[] = [];
  const lru = new Lru<string, number>(capacity, (key) => evicted.push(key), maxWeight);
  return { lru, evicted };
};

describe('Lru (segmented)', () => {
  it('evicts the least recently used entry past the count cap', () => {
    const { lru, evicted } = cache(3);
    for (const k of ['a', 'b', 'c', 'd']) lru.set(k, 1);
    expect(evicted).toEqual(['a']);
    expect(lru.size).toBe(3);
    expect(lru.get('a')).toBeUndefined();
    expect(lru.get('d')).toBe(1);
  });

  it('keeps entries in repeated use through a stream of entries used once', () => {
    const { lru } = cache(10);
    const hot = ['h1', 'h2', 'h3', 'h4', 'h5'];
    for (const k of hot) lru.set(k, 1);
    for (const k of hot) lru.get(k);
    // A scan three times the cache's size, each entry used once.
    for (let i = 0; i < 30; i++) lru.set(`cold${i}`, 1);
    for (const k of hot) expect(lru.peek(k)).toBe(1);
    // With a plain LRU the same scan would have pushed every one of them out.
    expect(lru.size).toBe(10);
  });

  it('demotes past the protected share and evicts from probation first', () => {
    const { lru, evicted } = cache(5);
    for (const k of ['a', 'b', 'c', 'd', 'e']) lru.set(k, 1);
    // Used again: protected, up to 80 % of five entries (four); the fifth use demotes the oldest.
    for (const k of ['a', 'b', 'c', 'd', 'e']) lru.get(k);
    lru.set('f', 1);
    expect(evicted).toEqual(['a']);
    for (const k of ['b', 'c', 'd', 'e', 'f']) expect(lru.peek(k)).toBe(1);
  });

  it('bounds the total weight, never evicting the entry just set', () => {
    const { lru, evicted } = cache(100, 10);
    lru.set('a', 1, 4);
    lru.set('b', 1, 4);
    lru.get('a');
    lru.set('c', 1, 4);
    // b (probation, oldest) goes first; a was used again.
    expect(evicted).toEqual(['b']);
    expect(lru.weight).toBe(8);
    lru.set('huge', 1, 50);
    expect(lru.peek('huge')).toBe(1);
    expect(lru.size).toBe(1);
    expect(lru.weight).toBe(50);
  });

  it('reweighs protected and probation entries, evicting when a document grows past the budget', () => {
    const { lru, evicted } = cache(100, 10);
    lru.set('a', 1, 2);
    lru.get('a');
    lru.set('b', 1, 2);
    lru.reweigh('a', 9);
    expect(evicted).toEqual(['b']);
    expect(lru.weight).toBe(9);
    lru.reweigh('a', 1);
    expect(lru.weight).toBe(1);
    lru.delete('a');
    expect(lru.weight).toBe(0);
    expect(lru.size).toBe(0);
  });

  it('replaces a value in place, and clear evicts everything', () => {
    const { lru, evicted } = cache(3);
    lru.set('a', 1, 1);
    lru.get('a');
    lru.set('a', 2, 3);
    expect(lru.get('a')).toBe(2);
    expect(lru.weight).toBe(3);
    lru.set('b', 1, 1);
    lru.clear();
    expect(evicted.sort()).toEqual(['a', 'b']);
    expect(lru.size).toBe(0);
    expect(lru.weight).toBe(0);
  });
});
