import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, change, conn, ENTITY, T0, USER, WS } from '../test/fixtures';
import { type EntityReader, newestFirst, readEntity } from './entity-reader';
import { MergeEngine } from './merge-engine';
import { InMemoryMergeStore } from './merge-store';
import type { HistoryEntry } from './types';

const user = { kind: 'user', id: USER } as const;

/** CRM A at +10 s (then compacted), CRM B at +20 s without having seen it, a user at +20.4 s after both. */
async function stored(): Promise<InMemoryMergeStore> {
  const store = new InMemoryMergeStore();
  const engine = new MergeEngine(store);
  await engine.applyInbound(change(CRM_A, 10, { stage: 'Proposal' }));
  await engine.compact(ENTITY, WS);
  await engine.applyInbound(change(CRM_B, 20, { owner: 'Dana' }));
  await engine.applyInbound({ ...change(CRM_A, 20.4, { stage: 'Won' }), source: user, eventKey: 'edit-1' });
  return store;
}

describe('readEntity', () => {
  it('lists the changes newest first; within one second, a change before the one it followed', async () => {
    const store = await stored();
    // The snapshot and the chunk after it are both read.
    expect(store.documents.get(ENTITY)?.snapshot).not.toBeNull();
    expect(store.documents.get(ENTITY)?.chunks).toHaveLength(2);
    const changes = await readEntity(store, ENTITY, (reader) => reader.changes());
    expect(changes?.map((c) => [c.source, c.fields])).toEqual([
      [user, { stage: { value: 'Won', eventTime: new Date(T0 + 20_400) } }],
      [conn(CRM_B), { owner: { value: 'Dana', eventTime: new Date(T0 + 20_000) } }],
      [conn(CRM_A), { stage: { value: 'Proposal', eventTime: new Date(T0 + 10_000) } }],
    ]);
    // The user's change and B's share their second: the user's followed B's.
    expect(changes?.[0]?.time).toEqual(changes?.[1]?.time);
    expect(changes?.[0]?.deps).toContain(changes?.[1]?.hash);
  });

  it('answers the state at a time, and null before the first change', async () => {
    const store = await stored();
    const states = await readEntity(store, ENTITY, (reader) =>
      [T0, T0 + 9_999, T0 + 15_000, T0 + 20_000].map((ms) => reader.stateAt(new Date(ms), {})),
    );
    expect(states?.slice(0, 2)).toEqual([null, null]);
    expect(states?.[2]).toEqual({
      values: { stage: 'Proposal' },
      provenance: { stage: { source: conn(CRM_A), eventTime: new Date(T0 + 10_000), conflicted: false } },
    });
    // To the second: everything of +20 s is in.
    expect(states?.[3]?.values).toEqual({ stage: 'Won', owner: 'Dana' });
    expect(states?.[3]?.provenance.stage?.source).toEqual(user);
  });

  it('applies the policies it is given to the past state', async () => {
    const store = new InMemoryMergeStore();
    const engine = new MergeEngine(store);
    await engine.applyInbound(change(CRM_A, 1, { stage: 'Won' }));
    await engine.applyInbound(change(CRM_B, 2, { stage: 'Lost' }));
    const [lww, manual] =
      (await readEntity(store, ENTITY, (reader) => [
        reader.stateAt(new Date(T0 + 5_000), {}),
        reader.stateAt(new Date(T0 + 5_000), { stage: { kind: 'manual' } }),
      ])) ?? [];
    expect(lww?.values.stage).toBe('Lost');
    expect(lww?.provenance.stage?.conflicted).toBe(false);
    expect(manual?.provenance.stage?.conflicted).toBe(true);
  });

  it('is null for an entity without a document', async () => {
    expect(await readEntity(new InMemoryMergeStore(), ENTITY, (reader) => reader.changes())).toBeNull();
  });

  it('keeps the document for an async read, and frees it afterwards', async () => {
    const store = await stored();
    let kept: EntityReader | undefined;
    const count = await readEntity(store, ENTITY, async (reader) => {
      kept = reader;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return reader.changes().length;
    });
    expect(count).toBe(3);
    expect(() => kept?.changes()).toThrow(/freed/);
  });
});

describe('newestFirst', () => {
  const entry = (hash: string, second: number): HistoryEntry => ({
    hash,
    source: conn(CRM_A),
    eventKey: hash,
    time: new Date(T0 + second * 1000),
    deps: [],
    fields: {},
  });

  it('orders by time, newest first, and reverses the causal order within a second', () => {
    const history = [entry('a', 5), entry('b', 1), entry('c', 5), entry('d', 9)];
    expect(newestFirst(history).map((e) => e.hash)).toEqual(['d', 'c', 'a', 'b']);
    // The input is left as it was.
    expect(history.map((e) => e.hash)).toEqual(['a', 'b', 'c', 'd']);
  });
});
