import { afterEach, describe, expect, it } from 'vitest';
import { PushHold } from './push-hold';

/** A hold on a clock the test moves, recording what it pushed. */
function holdOn(maxHoldMs: number) {
  let now = 1_000;
  const pushed: string[][] = [];
  const hold = new PushHold({
    maxHoldMs,
    push: async (ids) => {
      pushed.push([...ids].sort());
    },
    onError: () => undefined,
    now: () => now,
  });
  return {
    hold,
    pushed,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A batch of partition `p`, behind or not. */
const behindOn = (p: number) => ({ partitions: [p], behind: true });
const caughtUpOn = (p: number) => ({ partitions: [p], behind: false });

describe('PushHold', () => {
  const holds: PushHold[] = [];
  afterEach(async () => {
    for (const hold of holds.splice(0)) await hold.release();
  });

  it('pushes at once what a batch owes while its partition is not behind', async () => {
    const { hold, pushed } = holdOn(5_000);
    holds.push(hold);
    await hold.owed(['b', 'a'], caughtUpOn(0));
    expect(pushed).toEqual([['a', 'b']]);
    expect(hold.heldConnections()).toEqual([]);
  });

  it('holds what batches owe while their partition is behind, and pushes all of it once it has caught up', async () => {
    const { hold, pushed, advance } = holdOn(5_000);
    holds.push(hold);
    await hold.owed(['a'], behindOn(3));
    advance(500);
    await hold.owed(['a', 'b'], behindOn(3));
    expect(pushed).toEqual([]);
    expect(hold.heldConnections().sort()).toEqual(['a', 'b']);
    advance(500);
    // Caught up: what is held goes with what the last batch owes, each connection once.
    await hold.owed(['c', 'a'], caughtUpOn(3));
    expect(pushed).toEqual([['a', 'b', 'c']]);
    expect(hold.heldConnections()).toEqual([]);
  });

  it('holds only the backlogged partition’s connections: another workspace’s partition pushes its own at once', async () => {
    const { hold, pushed } = holdOn(5_000);
    holds.push(hold);
    await hold.owed(['backfilling'], behindOn(3));
    await hold.owed(['quiet'], caughtUpOn(7));
    expect(pushed).toEqual([['quiet']]);
    expect(hold.heldConnections()).toEqual(['backfilling']);
    await hold.owed([], caughtUpOn(3));
    expect(pushed).toEqual([['quiet'], ['backfilling']]);
  });

  it('pushes a connection held for the longest hold even while its partition stays behind, counted from the first batch that owed it', async () => {
    const { hold, pushed, advance } = holdOn(2_000);
    holds.push(hold);
    await hold.owed(['a'], behindOn(0));
    advance(1_500);
    await hold.owed(['a', 'b'], behindOn(0));
    advance(499);
    await hold.owed(['a'], behindOn(0));
    expect(pushed).toEqual([]);
    advance(1);
    await hold.owed([], behindOn(0));
    // `a` first owed 2,000 ms ago goes; `b`, owed 500 ms ago, stays held.
    expect(pushed).toEqual([['a']]);
    expect(hold.heldConnections()).toEqual(['b']);
    // Owed again after its push: held afresh.
    await hold.owed(['a'], behindOn(0));
    expect(hold.heldConnections().sort()).toEqual(['a', 'b']);
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
    await hold.owed(['a'], behindOn(0));
    expect(pushed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(pushed).toEqual([['a']]);
    expect(hold.heldConnections()).toEqual([]);
  });

  it('never holds with a longest hold of 0', async () => {
    const { hold, pushed } = holdOn(0);
    holds.push(hold);
    await hold.owed(['a'], behindOn(0));
    expect(pushed).toEqual([['a']]);
  });

  it('pushes everything held when released (the consumer stops)', async () => {
    const { hold, pushed } = holdOn(60_000);
    await hold.owed(['a'], behindOn(0));
    await hold.owed(['b'], behindOn(1));
    await hold.release();
    expect(pushed).toEqual([['a', 'b']]);
    expect(hold.heldConnections()).toEqual([]);
  });
});
