import { afterEach, describe, expect, it } from 'vitest';
import { PushHold } from './push-hold';

/** A hold on a clock the test moves, recording what it pushed. */
function holdOn(maxHoldMs: number) {
  let now = 1_000;
  const pushed: string[][] = [];
  const errors: unknown[] = [];
  const hold = new PushHold({
    maxHoldMs,
    push: async (ids) => {
      pushed.push([...ids].sort());
    },
    onError: (error) => errors.push(error),
    now: () => now,
  });
  return {
    hold,
    pushed,
    errors,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('PushHold', () => {
  const holds: PushHold[] = [];
  afterEach(async () => {
    for (const hold of holds.splice(0)) await hold.release();
  });

  it('pushes at once what a batch owes while the stage is not behind', async () => {
    const { hold, pushed } = holdOn(2_000);
    holds.push(hold);
    await hold.owed(['b', 'a'], false);
    expect(pushed).toEqual([['a', 'b']]);
    expect(hold.held()).toEqual([]);
  });

  it('holds what batches owe while the stage is behind, and pushes all of it once it has caught up', async () => {
    const { hold, pushed, advance } = holdOn(2_000);
    holds.push(hold);
    await hold.owed(['a'], true);
    advance(500);
    await hold.owed(['a', 'b'], true);
    expect(pushed).toEqual([]);
    expect(hold.held().sort()).toEqual(['a', 'b']);
    advance(500);
    // Caught up: what is held goes with what the last batch owes, each connection once.
    await hold.owed(['c', 'a'], false);
    expect(pushed).toEqual([['a', 'b', 'c']]);
    expect(hold.held()).toEqual([]);
  });

  it('pushes a connection held for the longest hold even while the stage stays behind, counted from the first batch that owed it', async () => {
    const { hold, pushed, advance } = holdOn(2_000);
    holds.push(hold);
    await hold.owed(['a'], true);
    advance(1_500);
    await hold.owed(['a', 'b'], true);
    advance(499);
    await hold.owed(['a'], true);
    expect(pushed).toEqual([]);
    advance(1);
    await hold.owed([], true);
    // `a` first owed 2,000 ms ago goes; `b`, owed 500 ms ago, stays held.
    expect(pushed).toEqual([['a']]);
    expect(hold.held()).toEqual(['b']);
    // Owed again after its push: held afresh.
    await hold.owed(['a'], true);
    expect(hold.held().sort()).toEqual(['a', 'b']);
  });

  it('pushes what is held when its time comes though no further batch commits', async () => {
    const pushed: string[][] = [];
    const hold = new PushHold({
      maxHoldMs: 30,
      push: async (ids) => {
        pushed.push([...ids]);
      },
      onError: () => undefined,
    });
    holds.push(hold);
    await hold.owed(['a'], true);
    expect(pushed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(pushed).toEqual([['a']]);
    expect(hold.held()).toEqual([]);
  });

  it('never holds with a longest hold of 0', async () => {
    const { hold, pushed } = holdOn(0);
    holds.push(hold);
    await hold.owed(['a'], true);
    expect(pushed).toEqual([['a']]);
  });

  it('pushes everything held when released (the consumer stops)', async () => {
    const { hold, pushed } = holdOn(60_000);
    await hold.owed(['a', 'b'], true);
    await hold.release();
    expect(pushed).toEqual([['a', 'b']]);
    expect(hold.held()).toEqual([]);
  });
});
