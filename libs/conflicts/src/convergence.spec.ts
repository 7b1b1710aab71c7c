import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, CRM_C, change, ENTITY, T0, USER, WS } from '../test/fixtures';
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
function interleave<T>(streams: T[][], picks: number[], dupes: number[]): T[] {
  const queues = streams.map((s) => [...s]);
  const out: T[] = [];
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

// Merges of entities, receipts and catch-ups join the edits. Survivor S is known to CRM A and
// CRM C, absorbed X to CRM B. Edits of different sources may arrive in any order; these are
// not order-free by design, so every history respects their causality, as the log does:
// - absorb copies what X holds and skips values S has: it runs at a cut (every replica has
//   taken in the same changes before it), after the X edits it absorbs; B edits S after it;
// - an unmerge (X's splitOff, then S's retract) reads S and writes at S's current heads: a cut;
// - catchUp moves connections to the current heads: a cut (the stage runs it once per batch);
// - a receipt (markSeen) names heads of an earlier cut, and comes in its connection's stream
//   (a write is received after the merge it carries, and in order with that record's edits).
// A replica may get an operation a second time later (a re-delivered log event): a duplicate.
const SURVIVOR = ENTITY;
const ABSORBED = '0190a000-0000-7000-8000-0000000000e2';
const MERGE = '0190a000-0000-7000-8000-00000000aa01';
const UNMERGE = '0190a000-0000-7000-8000-00000000aa02';
const ref = (entityId: string) => ({ entityId, workspaceId: WS, entityType: 'deal' });

type Op = 'catchUp' | 'absorb' | 'unmerge';
type Step =
  | { kind: 'edit'; change: InboundChange }
  | { kind: 'seen'; entityId: string; connectionId: string; cut: number }
  | { kind: 'op'; op: Op };
type Segment = { epoch: Step[][] } | { op: Op };

const receiptArb = fc.record({ seen: fc.constant(true as const) });
/** Edits timed in [from, to), and receipts unless this is the first epoch (no cut has heads yet). */
const streamArb = (from: number, to: number) => {
  const edit = editArb.map((e) => ({ ...e, at: from + (e.at % (to - from)) }));
  return fc.array(
    from === 0 ? edit : fc.oneof({ weight: 4, arbitrary: edit }, { weight: 1, arbitrary: receiptArb }),
    { maxLength: 5 },
  );
};

const historyArb = fc.record({
  policies: fc.record({ stage: policyArb, owner: policyArb, emails: policyArb }),
  // Before the merge: A and C edit S, B edits X.
  first: fc.tuple(streamArb(0, 20), streamArb(0, 20), streamArb(0, 20)),
  // Merged: A, B and C edit S.
  merged: fc.tuple(streamArb(21, 40), streamArb(21, 40), streamArb(21, 40)),
  // After the unmerge, if there is one: A and C edit S, B edits X again.
  unmerged: fc.option(fc.tuple(streamArb(41, 60), streamArb(41, 60), streamArb(41, 60)), { nil: undefined }),
  catchUps: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
});
type History = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

/** The history as segments: epochs of per-(source, entity) streams, and operations at cuts between them. */
function segmentsOf(history: History): Segment[] {
  const segments: Segment[] = [];
  const epoch = (
    n: number,
    streams: History['first'],
    entities: readonly [string, string, string],
  ): Step[][] =>
    streams.map((stream, s) =>
      stream.map((item, i): Step => {
        const connectionId = SOURCES[s]!;
        const entityId = entities[s]!;
        if ('seen' in item) return { kind: 'seen', entityId, connectionId, cut: n - 1 };
        return {
          kind: 'edit',
          change: { ...change(connectionId, item.at, item.fields), entityId, eventKey: `${n}:${s}:${i}` },
        };
      }),
    );
  segments.push({ epoch: epoch(0, history.first, [SURVIVOR, ABSORBED, SURVIVOR]) });
  if (history.catchUps[0]) segments.push({ op: 'catchUp' });
  segments.push({ op: 'absorb' });
  segments.push({ epoch: epoch(1, history.merged, [SURVIVOR, SURVIVOR, SURVIVOR]) });
  if (history.catchUps[1]) segments.push({ op: 'catchUp' });
  if (history.unmerged !== undefined) {
    segments.push({ op: 'unmerge' });
    segments.push({ epoch: epoch(2, history.unmerged, [SURVIVOR, ABSORBED, SURVIVOR]) });
  }
  if (history.catchUps[2]) segments.push({ op: 'catchUp' });
  return segments;
}

interface Delivery {
  picks: number[];
  dupes: number[];
  /** Operations delivered a second time, in the epoch after them. */
  again: boolean;
  /**
   * 1: each entity's document leaves the cache when the other's is read, and is loaded back.
   * Edits are then not re-delivered: an edit that changed nothing leaves no trace in the
   * document, so after a reload its second delivery is a new edit. The log never delivers
   * a committed event again, so only the cached case needs it.
   */
  cacheSize: 1 | 4;
}

async function play(segments: readonly Segment[], policies: PolicyMap, delivery?: Delivery) {
  const store = new InMemoryMergeStore();
  for (const [field, policy] of Object.entries(policies)) await store.setPolicy(WS, 'deal', field, policy);
  const engine = new MergeEngine(store, { cacheSize: delivery?.cacheSize ?? 4 });
  const user = { kind: 'user', id: USER } as const;
  const heads = async () => ({
    [SURVIVOR]: (await engine.outcome(ref(SURVIVOR))).heads.sort(),
    [ABSORBED]: (await engine.outcome(ref(ABSORBED))).heads.sort(),
  });
  /** The heads at each cut (the start, then after each epoch): the same in every replica. */
  const cuts: Record<string, string[]>[] = [];
  const statuses: string[] = [];
  const apply = async (step: Step) => {
    if (step.kind === 'edit') await engine.applyInbound(step.change);
    else if (step.kind === 'seen') {
      const at = cuts[step.cut + 1]?.[step.entityId] ?? [];
      await engine.markSeen(step.entityId, WS, step.connectionId, at);
    } else if (step.op === 'catchUp') {
      await engine.catchUp(ref(SURVIVOR));
      await engine.catchUp(ref(ABSORBED));
    } else if (step.op === 'absorb') {
      const input = { operationId: MERGE, workspaceId: WS, at: new Date(T0 + 20_500), connections: [CRM_B] };
      statuses.push((await engine.absorb(ref(SURVIVOR), ref(ABSORBED), input)).status);
    } else {
      const at = new Date(T0 + 40_500);
      const split = { operationId: UNMERGE, connections: [CRM_B], by: user, at };
      statuses.push((await engine.splitOff(ref(ABSORBED), ref(SURVIVOR), split)).status);
      const retract = { mergeOperationId: MERGE, operationId: UNMERGE, by: user, at };
      statuses.push((await engine.retract(ref(SURVIVOR), retract)).status);
    }
  };
  let redo: Op | undefined;
  for (const segment of segments) {
    if ('op' in segment) {
      await apply({ kind: 'op', op: segment.op });
      if (segment.op !== 'catchUp') redo = segment.op;
      continue;
    }
    cuts.push(await heads());
    const streams: Step[][] =
      delivery?.again && redo !== undefined ? [...segment.epoch, [{ kind: 'op', op: redo }]] : segment.epoch;
    redo = undefined;
    const steps =
      delivery === undefined
        ? streams.flat()
        : interleave(streams, delivery.picks, delivery.cacheSize === 1 ? [1] : delivery.dupes);
    for (const step of steps) await apply(step);
  }
  cuts.push(await heads());

  const result = async (entityId: string) => {
    const outcome = await engine.outcome(ref(entityId));
    const recorded = new Set((await store.listConflicts(entityId)).map((c) => c.id));
    const standing = await engine.standingConflictIds(ref(entityId));
    // Every conflict standing at the end was recorded when it arose, whatever the order.
    expect(standing.filter((id) => !recorded.has(id))).toEqual([]);
    return {
      values: outcome.values,
      provenance: outcome.provenance,
      owed: outcome.owed,
      held: outcome.held,
      digest: await engine.historyDigest(entityId, WS),
      conflicts: standing,
      bytes: store.documents.get(entityId)?.chunks.map((c) => Buffer.from(c.chunk).toString('hex')),
    };
  };
  return {
    engine,
    store,
    cuts,
    statuses,
    survivor: await result(SURVIVOR),
    absorbed: await result(ABSORBED),
  };
}

const deliveryArb = fc.record({
  picks: fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
  dupes: fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
  again: fc.boolean(),
  cacheSize: fc.constantFrom<1 | 4>(1, 4),
});

describe('convergence with merges of entities, receipts and catch-ups', () => {
  it('any delivery order that keeps their causality gives the same values, conflicts and history', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, deliveryArb, async (history, delivery) => {
        const segments = segmentsOf(history);
        const inOrder = await play(segments, history.policies);
        const shuffled = await play(segments, history.policies, delivery);
        expect(inOrder.statuses.every((s) => s === 'applied')).toBe(true);
        expect(shuffled.cuts).toEqual(inOrder.cuts);
        for (const side of ['survivor', 'absorbed'] as const) {
          const [a, b] = [inOrder[side], shuffled[side]];
          expect(b.values).toEqual(a.values);
          expect(b.provenance).toEqual(a.provenance);
          expect(b.owed).toEqual(a.owed);
          expect(b.held).toEqual(a.held);
          expect(b.digest).toBe(a.digest);
          expect(b.conflicts).toEqual(a.conflicts);
        }

        // Replaying into an empty store reproduces it exactly, bytes included.
        const replay = await play(segments, history.policies);
        expect(replay.survivor).toEqual(inOrder.survivor);
        expect(replay.absorbed).toEqual(inOrder.absorbed);

        // What is kept incrementally is what the stored bytes and synced heads load back to.
        for (const entityId of [SURVIVOR, ABSORBED]) {
          const kept = await inOrder.engine.outcome(ref(entityId));
          inOrder.engine.forget();
          expect(await inOrder.engine.outcome(ref(entityId))).toEqual(kept);
        }
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
