import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shareOut } from './consumer-group';

describe('shareOut (a shared batch among its partitions)', () => {
  it('takes everything waiting when it fits', () => {
    expect(shareOut(200, [0, 150, 0, 30])).toEqual([0, 150, 0, 30]);
  });

  it('gives a busy partition among idle ones the whole batch, not an even sliver', () => {
    const waiting = new Array(16).fill(0);
    waiting[7] = 1_000;
    expect(shareOut(200, waiting)[7]).toBe(200);
  });

  it('shares in proportion to what waits, at least one each', () => {
    expect(shareOut(100, [300, 100, 1, 0])).toEqual([74, 24, 1, 0]);
  });

  it('never exceeds the budget nor what a partition has waiting, and leaves none with work at zero while the budget allows', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 32 }),
        (budget, waiting) => {
          const shares = shareOut(budget, waiting);
          expect(shares.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
          shares.forEach((n, i) => {
            expect(n).toBeGreaterThanOrEqual(0);
            expect(n).toBeLessThanOrEqual(waiting[i]!);
          });
          if (waiting.filter((n) => n > 0).length <= budget)
            waiting.forEach((n, i) => {
              if (n > 0) expect(shares[i]).toBeGreaterThan(0);
            });
        },
      ),
    );
  });
});
