import { describe, expect, it } from 'vitest';
import { partitionFor } from './partitioner';

describe('partitionFor', () => {
  it('is stable: a workspace always maps to the same partition (the log depends on it)', () => {
    // Pinned values: if these change, existing logs would reorder. Do not update them.
    expect(
      ['9fd58768-8dbe-424b-a403-7ed0efca8dd1', '00000000-0000-0000-0000-000000000000', 'w'].map((id) =>
        partitionFor(id, 1024),
      ),
    ).toEqual(PINNED);
  });

  it('depends on the workspace alone, in range for every partition count', () => {
    for (const count of [1, 2, 16, 1024]) {
      const p = partitionFor('9fd58768-8dbe-424b-a403-7ed0efca8dd1', count);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(count);
    }
    expect(partitionFor('a', 1)).toBe(0);
  });

  it('spreads workspaces evenly over the partitions', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++)
      counts[partitionFor(`${i.toString(16).padStart(8, '0')}-8dbe-424b-a403-7ed0efca8dd1`, 16)]++;
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });
});

const PINNED = [777, 721, 822];
