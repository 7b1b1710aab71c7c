import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, CRM_C, change, ENTITY, WS } from '../test/fixtures';
import { MergeEngine } from './merge-engine';
import { InMemoryMergeStore } from './merge-store';

describe('MergeEngine', () => {
  it('an inbound change equal to what the source had costs a compare, not a merge', async () => {
    const store = new InMemoryMergeStore();
    const engine = new MergeEngine(store);
    await engine.applyInbound(change(CRM_A, 1, { stage: 'Won', amount: 5 }));
    for (let i = 2; i < 12; i++) {
      expect((await engine.applyInbound(change(CRM_A, i, { amount: 5, stage: 'Won' }))).status).toBe(
        'unchanged',
      );
    }
    expect(engine.stats).toMatchObject({ merged: 1, unchanged: 10 });
    expect(store.documents.get(ENTITY)?.chunks).toHaveLength(1);
  });

  it('keeps a document of 1,000 edits from 3 sources within 24 KB once compacted', async () => {
    const store = new InMemoryMergeStore();
    const engine = new MergeEngine(store);
    const sources = [CRM_A, CRM_B, CRM_C];
    const fields = ['stage', 'owner', 'amount', 'closeDate', 'name', 'pipeline', 'priority', 'nextStep'];
    for (let i = 0; i < 1000; i++) {
      const source = sources[i % 3]!;
      const field = fields[(i * 7) % fields.length]!;
      const value = field === 'amount' ? 1000 + i * 13 : `${field} ${i % 17}`;
      await engine.applyInbound(change(source, i, { [field]: value }));
      if (i % 10 === 9) await engine.markSeen(ENTITY, WS, sources[Math.floor(i / 10) % 3]!);
    }
    expect(engine.stats.merged).toBe(1000);
    await engine.compact(ENTITY, WS);
    const snapshot = store.documents.get(ENTITY)?.snapshot;
    expect(snapshot?.length).toBeGreaterThan(0);
    expect(snapshot!.length).toBeLessThanOrEqual(24 * 1024);
    expect(await new MergeEngine(store).historyDigest(ENTITY, WS)).toBe(
      await engine.historyDigest(ENTITY, WS),
    );
  });

  it('evicts cold documents from the cache and reloads them from the store', async () => {
    const store = new InMemoryMergeStore();
    const engine = new MergeEngine(store, { cacheSize: 2 });
    const ids = ['e1', 'e2', 'e3'].map((n) => `0190a000-0000-7000-8000-0000000000${n}`);
    for (const entityId of ids)
      await engine.applyInbound({ ...change(CRM_A, 1, { stage: entityId }), entityId });
    const outcome = await engine.outcome({ entityId: ids[0]!, workspaceId: WS, entityType: 'deal' });
    expect(outcome.values).toEqual({ stage: ids[0] });
    expect(engine.stats.cacheMisses).toBe(4);
  });
  it('evicts by memory as well as by count, keeping the most recent document whatever its size', async () => {
    const store = new InMemoryMergeStore();
    // A document of three changes weighs about 19 KB in memory (EntityDocument.memoryBytes):
    // the budget holds two of the four.
    const engine = new MergeEngine(store, { cacheSize: 100, cacheBytes: 45_000, compactAfterChunks: 4 });
    const ids = ['e1', 'e2', 'e3', 'e4'].map((n) => `0190a000-0000-7000-8000-0000000000${n}`);
    for (let i = 0; i < 12; i++) {
      const entityId = ids[i % ids.length]!;
      await engine.applyInbound({ ...change(CRM_A, i, { stage: `s${i}`, owner: `o${i}` }), entityId });
    }
    expect(engine.cached.documents).toBeLessThan(ids.length);
    expect(engine.cached.documents).toBeGreaterThan(0);
    expect(engine.stats.evictions).toBeGreaterThan(0);
    expect(engine.cached.bytes).toBeLessThanOrEqual(45_000);
    // Compaction replaces chunks by a snapshot, and reloads read it back unchanged.
    const before = await engine.outcome({ entityId: ids[0]!, workspaceId: WS, entityType: 'deal' });
    await engine.compact(ids[0]!, WS);
    engine.forget();
    expect(engine.cached).toEqual({ documents: 0, bytes: 0 });
    const after = await engine.outcome({ entityId: ids[0]!, workspaceId: WS, entityType: 'deal' });
    expect(after.values).toEqual(before.values);
    expect(after.heads).toEqual(before.heads);
    // One document above the whole budget still loads and stays usable.
    const tiny = new MergeEngine(store, { cacheBytes: 1 });
    expect((await tiny.outcome({ entityId: ids[1]!, workspaceId: WS, entityType: 'deal' })).values).toEqual(
      (await engine.outcome({ entityId: ids[1]!, workspaceId: WS, entityType: 'deal' })).values,
    );
    expect(tiny.cached.documents).toBe(1);
  });
});
