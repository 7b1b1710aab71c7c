import { describe, expect, it } from 'vitest';
import { BatchSizer } from './batch-sizer';

describe('BatchSizer', () => {
  it('starts at the base size', () => {
    expect(new BatchSizer(200, 5_000, 500).limit).toBe(200);
  });

  it('grows while full batches come back quicker than the target, at most doubling a batch, up to the max', () => {
    const sizer = new BatchSizer(200, 5_000, 500);
    const seen: number[] = [];
    // Full batches at 0.1 ms an event: the target would fit 5,000.
    for (let i = 0; i < 8; i++) {
      const limit = sizer.limit;
      sizer.observe(limit, limit, limit * 0.1);
      seen.push(sizer.limit);
    }
    expect(seen).toEqual([400, 800, 1_600, 3_200, 5_000, 5_000, 5_000, 5_000]);
  });

  it('grows toward the size that fits the target at the last rate, not past it', () => {
    const sizer = new BatchSizer(200, 50_000, 500);
    // 1 ms an event: 500 fit.
    sizer.observe(200, 200, 200);
    expect(sizer.limit).toBe(400);
    sizer.observe(400, 400, 400);
    expect(sizer.limit).toBe(500);
    for (let i = 0; i < 5; i++) sizer.observe(500, 500, 500);
    expect(sizer.limit).toBe(500);
  });

  it('does not grow on a batch that took all that was waiting: no backlog', () => {
    const sizer = new BatchSizer(200, 5_000, 500);
    sizer.observe(150, 200, 5);
    expect(sizer.limit).toBe(200);
  });

  it('comes down to what fits the target after a slow batch, never below the base', () => {
    const sizer = new BatchSizer(200, 5_000, 500);
    for (let i = 0; i < 5; i++) sizer.observe(sizer.limit, sizer.limit, 1);
    expect(sizer.limit).toBe(5_000);
    // The events grew costly (1 ms each): 500 fit the target.
    sizer.observe(5_000, 5_000, 5_000);
    expect(sizer.limit).toBe(500);
    // A batch slow however small it is: the base.
    sizer.observe(500, 500, 10_000);
    expect(sizer.limit).toBe(200);
  });

  it('goes back to the size before a growth that folded clearly slower per event, and grows no further until the backlog ends', () => {
    const sizer = new BatchSizer(200, 5_000, 1_000);
    // 0.1 ms an event up to 800 events; past that, the handler's memory no longer holds the
    // batch's records and each event costs 0.5 ms.
    const costOf = (events: number) => events * (events > 800 ? 0.5 : 0.1);
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const limit = sizer.limit;
      sizer.observe(limit, limit, costOf(limit));
      seen.push(sizer.limit);
    }
    expect(seen).toEqual([400, 800, 1_600, 800, 800, 800]);
    // The backlog ends (a batch that is not full): the next one may grow again.
    sizer.observe(300, 800, 30);
    sizer.observe(800, 800, 80);
    expect(sizer.limit).toBe(1_600);
  });

  it('keeps growing through a grown batch only a little slower per event (a busy box)', () => {
    const sizer = new BatchSizer(200, 5_000, 1_000);
    sizer.observe(200, 200, 20);
    expect(sizer.limit).toBe(400);
    // 0.12 against 0.1 ms an event.
    sizer.observe(400, 400, 48);
    expect(sizer.limit).toBe(800);
  });

  it('goes back to the base after a failed batch', () => {
    const sizer = new BatchSizer(200, 5_000, 500);
    sizer.observe(200, 200, 1);
    expect(sizer.limit).toBe(400);
    sizer.failed();
    expect(sizer.limit).toBe(200);
  });

  it('never moves when the max is the base', () => {
    const sizer = new BatchSizer(200, 200, 500);
    sizer.observe(200, 200, 1);
    sizer.observe(200, 200, 10_000);
    expect(sizer.limit).toBe(200);
  });
});
