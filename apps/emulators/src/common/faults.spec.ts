import { Mulberry32 } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { FaultRegistry } from './faults';

describe('FaultRegistry', () => {
  it('applies a fault with a count to that many matching calls, of its account only', () => {
    const faults = new FaultRegistry();
    faults.add({ service: 'microsoft', kind: 'rate-limit', count: 2, account: 'rita@contoso.example' });
    expect(faults.take('microsoft', 'rate-limit', 'sam@contoso.example')).toBeUndefined();
    expect(faults.take('google', 'rate-limit', 'rita@contoso.example')).toBeUndefined();
    expect(faults.take('microsoft', 'rate-limit', 'rita@contoso.example')).toBeDefined();
    expect(faults.take('microsoft', 'rate-limit', 'rita@contoso.example')).toBeDefined();
    expect(faults.take('microsoft', 'rate-limit', 'rita@contoso.example')).toBeUndefined();
  });

  it('applies a fault at a rate to about that share of calls, the same calls for the same seed', () => {
    const hits = (seed: number) => {
      const draws = new Mulberry32(seed);
      const faults = new FaultRegistry(() => draws.next());
      faults.add({ service: 'microsoft', kind: 'rate-limit', rate: 0.05 });
      return Array.from({ length: 4_000 }, () => faults.take('microsoft', 'rate-limit') !== undefined);
    };
    const share = hits(7).filter(Boolean).length / 4_000;
    expect(share).toBeGreaterThan(0.035);
    expect(share).toBeLessThan(0.065);
    expect(hits(7)).toEqual(hits(7));
    expect(hits(8)).not.toEqual(hits(7));
  });

  it('lets a call a rated fault missed meet the next fault of the kind', () => {
    const faults = new FaultRegistry(() => 0.99);
    faults.add({ service: 'google', kind: 'server-error', rate: 0.5 });
    faults.add({ service: 'google', kind: 'server-error', count: 1 });
    expect(faults.take('google', 'server-error')?.count).toBe(1);
    expect(faults.take('google', 'server-error')).toBeUndefined();
  });
});
