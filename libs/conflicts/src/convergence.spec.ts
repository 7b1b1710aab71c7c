import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, CRM_C, change, ENTITY, WS } from '../test/fixtures';
import { EntityDocument } from './entity-document';
import { MergeEngine } from './merge-engine';
import { InMemoryMergeStore } from './merge-store';
import type { FieldPolicy, InboundChange, PolicyMap } from './types';

const SOURCES = [CRM_A, CRM_B, CRM_C];
const FIELDS = ['stage', 'owner', 'emails'];

const policyArb: fc.Arbitrary<FieldPolicy> = fc.oneof(
  fc.constant<FieldPolicy>({ kind: 'lww' }),
  fc.constant<FieldPolicy>({ kind: 'priority', order: [CRM_B, CRM_A] }),
  fc.constant<FieldPolicy>({ kind: 'manual' }),
  fc.constant<FieldPolicy>({ kind: 'union' }),
);

const editArb = fc.record({
  at: fc.integer({ min: 0, max: 20 }),
  fields: fc.dictionary(
    fc.constantFrom(...FIELDS),
    fc.oneof(
      fc.constantFrom('x', 'y', 'z'),
      fc.array(fc.constantFrom('a@x.com', 'b@x.com'), { maxLength: 2 }),
    ),
    { minKeys: 1, maxKeys: 3 },
  ),
});

/** Per source an ordered list of changes (the log keeps one source record's changes in order). */
const scenarioArb = fc.record({
  policies: fc.record({ stage: policyArb, owner: policyArb, emails: policyArb }),
  streams: fc.tuple(...SOURCES.map(() => fc.array(editArb, { maxLength: 6 }))),
});

function build(streams: readonly { at: number; fields: Record<string, unknown> }[][]): InboundChange[][] {
  return streams.map((edits, s) =>
    edits.map((e, i) => ({ ...change(SOURCES[s]!, e.at, e.fields), eventKey: `${s}:${i}` })),
  );
}

/** Interleaves the streams by the given picks, keeping each stream's order, and re-delivers some. */
function interleave(streams: InboundChange[][], picks: number[], dupes: number[]): InboundChange[] {
  const queues = streams.map((s) => [...s]);
  const out: InboundChange[] = [];
  let p = 0;
  while (queues.some((q) => q.length > 0)) {
    const open = queues.filter((q) => q.length > 0);
    const next = open[(picks[p++ % Math.max(1, picks.length)] ?? 0) % open.length]!.shift()!;
    out.push(next);
    const dupe = dupes[out.length % Math.max(1, dupes.length)];
    if (dupe !== undefined && dupe % 3 === 0) out.push(out[dupe % out.length]!);
  }
  return out;
}

async function run(changes: InboundChange[], policies: PolicyMap, store = new InMemoryMergeStore()) {
  for (const [field, policy] of Object.entries(policies)) await store.setPolicy(WS, 'deal', field, policy);
  const engine = new MergeEngine(store, { cacheSize: 4 });
  for (const c of changes) await engine.applyInbound(c);
  const ref = { entityId: ENTITY, workspaceId: WS, entityType: 'deal' };
  const outcome = await engine.outcome(ref);
  const digest = await engine.historyDigest(ENTITY, WS);
  const recorded = new Set((await store.listConflicts(ENTITY)).map((c) => c.id));
  const chunks = store.documents.get(ENTITY)?.chunks.map((c) => c.chunk) ?? [];
  const standing = EntityDocument.load(ENTITY, null, chunks).standingConflictIds();
  // Every conflict standing at the end was recorded when it arose, whatever the order.
  expect(standing.filter((id) => !recorded.has(id))).toEqual([]);
  return { engine, store, outcome, digest, conflicts: standing };
}

describe('convergence', () => {
  it('any interleaving and re-delivery of the same changes gives the same state, history and conflicts', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb,
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
        async ({ policies, streams }, picks, dupes) => {
          const changes = build(streams);
          const inOrder = await run(changes.flat(), policies);
          const shuffled = await run(interleave(changes, picks, dupes), policies);
          expect(shuffled.outcome.values).toEqual(inOrder.outcome.values);
          expect(shuffled.outcome.provenance).toEqual(inOrder.outcome.provenance);
          expect(shuffled.outcome.owed).toEqual(inOrder.outcome.owed);
          expect(shuffled.digest).toBe(inOrder.digest);
          expect(shuffled.conflicts).toEqual(inOrder.conflicts);

          // Replaying into an empty store reproduces it exactly, bytes included.
          const replay = await run(changes.flat(), policies);
          expect(replay.digest).toBe(inOrder.digest);
          expect(replay.outcome).toEqual(inOrder.outcome);
          const bytes = (r: typeof inOrder) =>
            r.store.documents.get(ENTITY)?.chunks.map((c) => Buffer.from(c.chunk).toString('hex'));
          expect(bytes(replay)).toEqual(bytes(inOrder));

          // The incrementally kept state matches what Automerge itself reads back.
          inOrder.engine.forget();
          expect(
            await inOrder.engine.outcome({ entityId: ENTITY, workspaceId: WS, entityType: 'deal' }),
          ).toEqual(inOrder.outcome);
          const chunks = inOrder.store.documents.get(ENTITY)?.chunks.map((c) => c.chunk) ?? [];
          const fromBytes = EntityDocument.load(ENTITY, null, chunks);
          expect(fromBytes.state(policies)).toEqual({
            values: inOrder.outcome.values,
            provenance: inOrder.outcome.provenance,
          });
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});
