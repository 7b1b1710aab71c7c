import { expect, it } from 'vitest';
import { MergeEngine } from '../src/merge-engine';
import type { MergeStore } from '../src/merge-store';
import { CRM_A, CRM_B, change, ENTITY, USER, WS } from './fixtures';

const ref = { entityId: ENTITY, workspaceId: WS, entityType: 'deal' };

/** The behaviour every MergeStore adapter must show, run through the engine. */
export function mergeStoreAcceptance(
  withStore: (body: (store: MergeStore) => Promise<void>) => Promise<void>,
): void {
  it('persists every change incrementally: a fresh engine reloads the same state, heads and owed fields', () =>
    withStore(async (store) => {
      const engine = new MergeEngine(store);
      await engine.applyInbound(change(CRM_A, 1, { stage: 'Proposal' }));
      await engine.applyInbound(change(CRM_B, 2, { owner: 'Dana' }));
      const last = await engine.applyInbound(change(CRM_B, 3, { stage: 'Won' }));
      expect(last.conflicts).toHaveLength(1);
      const fresh = new MergeEngine(store);
      const reloaded = await fresh.outcome(ref);
      expect(reloaded).toEqual({ ...last, conflicts: [] });
      expect(Object.fromEntries(reloaded.owed)).toEqual({ [CRM_A]: ['owner', 'stage'], [CRM_B]: [] });
      expect(await fresh.historyDigest(ENTITY, WS)).toBe(await engine.historyDigest(ENTITY, WS));
      expect(fresh.stats.cacheMisses).toBe(1);
    }));

  it('compaction keeps the same state and history, and later changes append after it', () =>
    withStore(async (store) => {
      const engine = new MergeEngine(store, { compactAfterBytes: 200 });
      for (let i = 0; i < 12; i++)
        await engine.applyInbound(change(i % 2 ? CRM_A : CRM_B, i, { amount: i, stage: `s${i % 3}` }));
      const before = await engine.outcome(ref);
      const history = await engine.history(ENTITY, WS);
      expect(await engine.compactDue()).toBe(1);
      await engine.applyInbound(change(CRM_A, 50, { stage: 'Won' }));
      const after = await engine.outcome(ref);
      const fresh = new MergeEngine(store);
      expect(await fresh.outcome(ref)).toEqual(after);
      expect((await fresh.history(ENTITY, WS)).slice(0, history.length)).toEqual(history);
      expect(after.values).toEqual({ ...before.values, stage: 'Won' });
      await fresh.compact(ENTITY, WS);
      expect(await new MergeEngine(store).outcome(ref)).toEqual(after);
    }));

  it('keeps synced heads per connection, and records each conflict once with its resolution', () =>
    withStore(async (store) => {
      await store.setPolicy(WS, 'deal', 'stage', { kind: 'manual' });
      const engine = new MergeEngine(store);
      await engine.applyInbound(change(CRM_A, 1, { stage: 'Won' }));
      const conflicted = await engine.applyInbound(change(CRM_B, 2, { stage: 'Lost' }));
      const conflict = conflicted.conflicts[0]!;
      await store.recordConflicts([conflict]); // a replay records it again: still one row
      expect(await store.listConflicts(ENTITY)).toEqual([conflict]);

      await engine.markSeen(ENTITY, WS, CRM_A);
      const resolved = await engine.resolveConflict({
        ...ref,
        conflictId: conflict.id,
        field: 'stage',
        value: 'Lost',
        userId: USER,
        at: new Date(conflict.detectedAt.getTime() + 1000),
        eventKey: 'ui:resolve:1',
      });
      expect(resolved.values.stage).toBe('Lost');
      const [row] = await store.listConflicts(ENTITY);
      expect(row).toMatchObject({ status: 'resolved', resolution: { value: 'Lost', userId: USER } });

      const fresh = new MergeEngine(store);
      const outcome = await fresh.outcome(ref);
      expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['stage'], [CRM_B]: [] });
      expect(await store.policies(WS, 'deal')).toEqual({ stage: { kind: 'manual' } });
      await store.setPolicy(WS, 'deal', 'stage', { kind: 'priority', order: [CRM_B] });
      expect(await store.policies(WS, 'deal')).toEqual({ stage: { kind: 'priority', order: [CRM_B] } });
    }));
}
