import { describe, expect, it } from 'vitest';
import { partitionFor } from './partitioner';

describe('partitionFor', () => {
  it('is stable: the same record always maps to the same partition (the log depends on it)', () => {
    // Pinned values: if these change, existing logs would reorder. Do not update them.
    expect(partitionFor('9fd58768-8dbe-424b-a403-7ed0efca8dd1', 'person', 'contact-1', 16)).toBe(
      partitionFor('9fd58768-8dbe-424b-a403-7ed0efca8dd1', 'person', 'contact-1', 16),
    );
    expect([0, 1, 2].map((i) => partitionFor('c', 'person', `r-${i}`, 1024))).toEqual(PINNED);
  });

  it('separates the parts, so shifting text between them changes the key', () => {
    const a = partitionFor('ab', 'c', 'd', 1 << 30);
    const b = partitionFor('a', 'bc', 'd', 1 << 30);
    expect(a).not.toBe(b);
  });

  it('spreads records evenly over the partitions', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[partitionFor('conn', 'person', `contact-${i}`, 16)]++;
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });
});

const PINNED = [20, 423, 826];
