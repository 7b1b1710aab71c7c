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
  it('gives the hashes stored in write_receipt.content_hash: a change here makes every stored receipt unmatched', () => {
    expect(contentHash({})).toBe('RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o');
    expect(contentHash({ a: null })).toBe('RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o');
    expect(
      contentHash({
        firstName: 'Zoë',
        emails: ['a@x.example', null],
        stage: { id: 'won', at: null },
        amount: 1200,
      }),
    ).toBe('q3UZPmONcNjGiv1Mq9cZ38qSTHz7_nGLQpdr51EDyhs');
    expect(contentHash({ start: new Date(Date.UTC(2026, 10, 29, 10)) })).toBe(
      'i9FNfQ_4M06MvNi-1vI38iYisvnbGAi360nV1RFs0I0',
    );
  });
});
