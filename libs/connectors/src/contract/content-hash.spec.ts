import { describe, expect, it } from 'vitest';
import { contentHash } from './content-hash';

describe('contentHash', () => {
  it('ignores key order and absent values', () => {
    expect(contentHash({ a: 1, b: { y: 2, x: [1, 'z'] } })).toBe(
      contentHash({ b: { x: [1, 'z'], y: 2 }, a: 1, c: null }),
    );
  });
  it('tells different content apart', () => {
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: '1' }));
    expect(contentHash({ a: [1, 2] })).not.toBe(contentHash({ a: [2, 1] }));
  });
});
