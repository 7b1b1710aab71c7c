import * as Automerge from '@automerge/automerge';
import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, CRM_C, change, conn, T0, USER } from '../test/fixtures';
import { actorOf } from './actor';
import { EntityDocument } from './entity-document';
import type { PolicyMap } from './types';

const owedOf = (doc: EntityDocument, policies: PolicyMap = {}) =>
  Object.fromEntries(doc.outcome(policies).owed);

/** How many times Automerge loaded changes (applied deferred ones) while `read` ran. */
function automergeLoadsDuring(read: () => void): number {
  const backend = Object.getPrototypeOf(Automerge.getBackend(Automerge.init())) as {
    loadIncremental: (bytes: Uint8Array) => number;
  };
  const original = backend.loadIncremental;
  let loads = 0;
  backend.loadIncremental = function (this: unknown, bytes: Uint8Array) {
    loads++;
    return original.call(this, bytes);
  };
  try {
    read();
  } finally {
    backend.loadIncremental = original;
  }
  return loads;
}

describe('EntityDocument', () => {
  it('merges the seeds’ example: concurrent edits of different fields, each CRM owed what it lacks', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Proposal' }), {});
    const { outcome } = doc.applyInbound(change(CRM_B, 2, { owner: 'Dana' }), {});
    expect(outcome.values).toEqual({ stage: 'Proposal', owner: 'Dana' });
    expect(outcome.conflicts).toEqual([]);
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['owner'], [CRM_B]: ['stage'] });
    expect(outcome.provenance.stage).toEqual({
      source: conn(CRM_A),
      eventTime: new Date(T0 + 1000),
      conflicted: false,
    });
    expect(outcome.provenance.owner?.source).toEqual(conn(CRM_B));
  });

  it('records no conflict when concurrent edits agree', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Won' }), {});
    const { outcome } = doc.applyInbound(change(CRM_B, 2, { stage: 'Won' }), {});
    expect(outcome.conflicts).toEqual([]);
    expect(doc.standingConflictIds()).toEqual([]);
  });

  it('catchUp: a connection holding the winner edits next as an overwrite, not a new conflict', () => {
    const run = (catchUp: boolean) => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_A, 10, { stage: 'Won' }), {});
      doc.applyInbound(change(CRM_B, 5, { stage: 'Lost' }), {}); // settled: A's later value wins
      const moved = catchUp ? doc.catchUp({}) : new Map();
      const { outcome } = doc.applyInbound(change(CRM_A, 20, { stage: 'Closed' }), {});
      return { moved, outcome };
    };
    const caught = run(true);
    expect([...caught.moved.keys()]).toEqual([CRM_A]); // B still lacks the winner: it stays behind
    expect(caught.outcome.conflicts).toEqual([]);
    expect(caught.outcome.values.stage).toBe('Closed');
    // Without it, B's settled loser stands beside A's new value and is reported again.
    expect(run(false).outcome.conflicts).toHaveLength(1);
  });

  it('held: an edit our later write replaced still merges, and the source is owed it when it wins', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { title: 'CTO' }), {});
    doc.markSeen(CRM_B); // we wrote CTO to B at t≈1…
    // …over B's edit made at t=2, which reaches us afterwards.
    const { outcome } = doc.applyInbound(
      { ...change(CRM_B, 2, { title: 'CEO' }), held: { title: 'CTO' } },
      {},
    );
    expect(outcome.values.title).toBe('CEO');
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['title'], [CRM_B]: ['title'] });
    // Without it, B would be taken to hold CEO and never be written again.
    const plain = EntityDocument.create('e');
    plain.applyInbound(change(CRM_A, 1, { title: 'CTO' }), {});
    plain.markSeen(CRM_B);
    expect(
      Object.fromEntries(plain.applyInbound(change(CRM_B, 2, { title: 'CEO' }), {}).outcome.owed)[CRM_B],
    ).toEqual([]);
  });

  it('a stored change whose dependency is missing is dropped on load, and the actor edits on', () => {
    const doc = EntityDocument.create('e');
    const first = doc.applyInbound(change(CRM_A, 1, { stage: 'Lead' }), {}).chunk!;
    const second = doc.applyInbound(change(CRM_A, 2, { stage: 'Won' }), {}).chunk!;
    // The same actor's third change, stored although what it depends on never was.
    const dangling = Automerge.encodeChange({
      actor: actorOf(conn(CRM_A)),
      author: null,
      seq: 3,
      startOp: 3,
      time: 0,
      message: 'lost',
      deps: ['ff'.repeat(32)],
      ops: [{ action: 'set', obj: '_root', key: 'stage', value: 'x', pred: [] } as never],
    });
    const loaded = EntityDocument.load('e', null, [first, second, dangling]);
    expect(loaded.repaired).toBe(true);
    const { outcome } = loaded.applyInbound(change(CRM_A, 4, { stage: 'Lost' }), {});
    expect(outcome.values.stage).toBe('Lost');
    expect(loaded.history().map((h) => h.eventKey)).not.toContain('lost');
  });

  it("a receipt of an older write keeps the source's own latest change in its view: its next change follows it", () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Lead' }), {});
    const written = doc.getHeads(); // what we then wrote to B
    doc.applyInbound(change(CRM_B, 2, { owner: 'Dana' }), {}); // B's own edit, after that
    const synced = doc.markSeen(CRM_B, written)!;
    // B's own change was concurrent with the write: B has seen both.
    expect(synced.heads).toHaveLength(2);
    expect(synced.heads).toEqual(expect.arrayContaining(written));
    const { outcome } = doc.applyInbound(change(CRM_B, 3, { owner: 'Eve' }), {});
    expect(outcome.values.owner).toBe('Eve');
    expect(outcome.conflicts).toEqual([]); // no conflict of B with itself
    // The document holds a chain of B's changes: it survives a save and load.
    const loaded = EntityDocument.load('e', doc.save(), []);
    expect(loaded.state({}).values).toEqual({ stage: 'Lead', owner: 'Eve' });
  });

  describe('heads the document does not hold', () => {
    const foreign = () => {
      const other = EntityDocument.create('other');
      other.applyInbound(change(CRM_A, 1, { stage: 'Elsewhere' }), {});
      return other.getHeads();
    };

    it('a receipt at foreign heads moves nothing, and the next change still applies', () => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_B, 1, { owner: 'Dana' }), {});
      const before = doc.syncedState(CRM_B);
      expect(doc.markSeen(CRM_B, foreign())).toBeNull();
      expect(doc.syncedState(CRM_B)).toEqual(before);
      const { outcome } = doc.applyInbound(change(CRM_B, 2, { owner: 'Eve' }), {});
      expect(outcome.values.owner).toBe('Eve');
      expect(outcome.conflicts).toEqual([]);
    });

    it('stored synced heads it does not hold are dropped on load; the connection edits on from its own last change', () => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_B, 1, { owner: 'Dana' }), {});
      doc.applyInbound(change(CRM_A, 2, { stage: 'Won' }), {});
      const loaded = EntityDocument.load(
        'e',
        doc.save(),
        [],
        new Map([[CRM_B, { heads: foreign(), stale: {} }]]),
      );
      expect(loaded.knows(CRM_B)).toBe(false);
      const { outcome } = loaded.applyInbound(change(CRM_B, 3, { owner: 'Eve' }), {});
      // B's new edit follows its own earlier one (an overwrite), and stays concurrent with A's.
      expect(outcome.values).toEqual({ owner: 'Eve', stage: 'Won' });
      expect(outcome.conflicts).toEqual([]);
      expect(Object.fromEntries(outcome.owed)[CRM_B]).toEqual(['stage']);
    });
  });

  it('catchUp leaves every connection where it is while a manual conflict is open', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 10, { stage: 'Won' }), { stage: { kind: 'manual' } });
    doc.applyInbound(change(CRM_B, 5, { stage: 'Lost' }), { stage: { kind: 'manual' } });
    expect(doc.catchUp({ stage: { kind: 'manual' } }).size).toBe(0);
  });

  it('under manual, two sources that report the same value have nothing to settle; the next edit is an overwrite', () => {
    const manual: PolicyMap = { stage: { kind: 'manual' } };
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Lead' }), manual);
    const { outcome: agreed } = doc.applyInbound(change(CRM_B, 2, { stage: 'Lead' }), manual);
    expect(agreed.conflicts).toEqual([]);
    expect(agreed.provenance.stage?.conflicted).toBe(false);
    // Both hold what the entity shows: they catch up to it, so A's next edit replaces both.
    expect(doc.catchUp(manual).size).toBeGreaterThan(0);
    const { outcome } = doc.applyInbound(change(CRM_A, 3, { stage: 'Won' }), manual);
    expect(outcome.values.stage).toBe('Won');
    expect(outcome.conflicts).toEqual([]);
    expect(outcome.provenance.stage?.conflicted).toBe(false);
    expect(Object.fromEntries(outcome.owed)[CRM_B]).toEqual(['stage']);
  });

  describe('the same field edited concurrently', () => {
    const concurrently = (policies: PolicyMap, a: unknown = 'Won', b: unknown = 'Lost') => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_A, 10, { stage: a }), policies);
      const { outcome } = doc.applyInbound(change(CRM_B, 5, { stage: b }), policies);
      return { doc, outcome };
    };

    it('lww: the later event time wins, the conflict is recorded, the loser is owed the winner', () => {
      const { outcome } = concurrently({});
      expect(outcome.values.stage).toBe('Won');
      expect(outcome.conflicts).toHaveLength(1);
      expect(outcome.conflicts[0]).toMatchObject({
        field: 'stage',
        kind: 'concurrent',
        policy: 'lww',
        status: 'resolved',
        winner: { value: 'Won', source: conn(CRM_A), eventTime: new Date(T0 + 10_000) },
      });
      expect(outcome.conflicts[0]?.candidates.map((c) => c.value).sort()).toEqual(['Lost', 'Won']);
      expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: [], [CRM_B]: ['stage'] });
    });

    it('lww: equal event times are broken by connection id', () => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_B, 7, { stage: 'B' }), {});
      const { outcome } = doc.applyInbound(change(CRM_A, 7, { stage: 'A' }), {});
      expect(outcome.values.stage).toBe(CRM_B > CRM_A ? 'B' : 'A');
    });

    it('priority: the higher-ranked source wins even with the older edit', () => {
      const { outcome } = concurrently({ stage: { kind: 'priority', order: [CRM_B, CRM_A] } });
      expect(outcome.values.stage).toBe('Lost');
      expect(outcome.conflicts[0]).toMatchObject({
        policy: 'priority',
        status: 'resolved',
        winner: { value: 'Lost' },
      });
      expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['stage'], [CRM_B]: [] });
    });

    it('manual: both values kept, the field conflicted and owed to nobody until a person decides', () => {
      const policies: PolicyMap = { stage: { kind: 'manual' } };
      const { doc, outcome } = concurrently(policies);
      const conflict = outcome.conflicts[0];
      expect(conflict).toMatchObject({ policy: 'manual', status: 'open' });
      expect(conflict?.winner).toBeUndefined();
      expect(outcome.provenance.stage?.conflicted).toBe(true);
      expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: [], [CRM_B]: [] });

      const resolved = doc.applyInbound(
        {
          ...change(CRM_A, 20, { stage: 'Lost' }),
          source: { kind: 'user', id: USER },
          eventKey: 'resolve-1',
        },
        policies,
      ).outcome;
      expect(resolved.values.stage).toBe('Lost');
      expect(resolved.provenance.stage).toMatchObject({
        source: { kind: 'user', id: USER },
        conflicted: false,
      });
      expect(resolved.conflicts).toEqual([]);
      expect(Object.fromEntries(resolved.owed)).toEqual({ [CRM_A]: ['stage'], [CRM_B]: [] });
      // The resolution is a change in the history, by the user.
      expect(doc.history().at(-1)).toMatchObject({
        source: { kind: 'user', id: USER },
        eventKey: 'resolve-1',
      });
    });

    it('union: sets merge, and both sides are owed the union', () => {
      const { outcome } = concurrently({ emails: { kind: 'union' } }, undefined, undefined);
      expect(outcome.values.stage).toBe('Won'); // stage stays lww
      const doc = EntityDocument.create('e');
      const policies: PolicyMap = { emails: { kind: 'union' } };
      doc.applyInbound(change(CRM_A, 1, { emails: ['ana@a.com', 'ana@b.com'] }), policies);
      const merged = doc.applyInbound(
        change(CRM_B, 2, { emails: ['ana@a.com', 'ana@c.com'] }),
        policies,
      ).outcome;
      expect(merged.values.emails).toEqual(['ana@a.com', 'ana@b.com', 'ana@c.com']);
      expect(merged.conflicts[0]).toMatchObject({ policy: 'union', status: 'resolved' });
      expect(Object.fromEntries(merged.owed)).toEqual({ [CRM_A]: ['emails'], [CRM_B]: ['emails'] });
    });

    it.each([
      ['lww', {}],
      ['priority', { stage: { kind: 'priority', order: [CRM_A, CRM_B] } }],
      ['manual', { stage: { kind: 'manual' } }],
      ['union', { stage: { kind: 'union' } }],
    ] as const)(
      '%s: an edit made after seeing the other is a plain overwrite, no conflict',
      (_name, policies) => {
        const doc = EntityDocument.create('e');
        doc.applyInbound(change(CRM_A, 10, { stage: 'Won' }), policies);
        doc.markSeen(CRM_B);
        const { outcome } = doc.applyInbound(change(CRM_B, 11, { stage: 'Lost' }), policies);
        expect(outcome.conflicts).toEqual([]);
        expect(outcome.values.stage).toBe('Lost');
        expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['stage'], [CRM_B]: [] });
      },
    );
  });

  it('lww: a late event does not overwrite a newer value it had seen, and is recorded', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 100, { stage: 'Won' }), {});
    doc.markSeen(CRM_B);
    const { outcome } = doc.applyInbound(change(CRM_B, 50, { stage: 'Lost', amount: 5 }), {});
    expect(outcome.values).toEqual({ stage: 'Won', amount: 5 });
    expect(outcome.conflicts).toHaveLength(1);
    expect(outcome.conflicts[0]).toMatchObject({
      kind: 'late',
      policy: 'lww',
      winner: { value: 'Won', source: conn(CRM_A) },
      candidates: [
        { value: 'Lost', source: conn(CRM_B), eventTime: new Date(T0 + 50_000) },
        { value: 'Won' },
      ],
    });
    // CRM B still holds its late value, so writeback owes it the winner.
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['amount'], [CRM_B]: ['stage'] });
    doc.markSeen(CRM_B);
    expect(owedOf(doc)[CRM_B]).toEqual([]);
  });

  it.each([
    ['lww', {}],
    ['manual', { stage: { kind: 'manual' } }],
    ['priority', { stage: { kind: 'priority', order: [CRM_B, CRM_A] } }],
  ] as const)(
    '%s: a read of the source’s own past, merged after its later edit, changes nothing and owes it nothing',
    (_kind, policies) => {
      const doc = EntityDocument.create('e');
      doc.applyInbound(change(CRM_A, 10, { stage: 'Lead', amount: 5 }), policies);
      doc.markSeen(CRM_B);
      // CRM A's notification of its edit at 30, then a full read of the record taken at 20
      // (between its two edits) that reached the log after the notification.
      doc.applyInbound(change(CRM_A, 30, { stage: 'Won' }), policies);
      const { outcome } = doc.applyInbound(change(CRM_A, 20, { stage: 'Proposal', amount: 5 }), policies);
      expect(outcome.values).toEqual({ stage: 'Won', amount: 5 });
      expect(outcome.conflicts).toEqual([]);
      // A holds its own latest edit; only B is owed it.
      expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: [], [CRM_B]: ['stage'] });
      // A later edit of the field in A is a change like any other.
      const next = doc.applyInbound(change(CRM_A, 40, { stage: 'Lost' }), policies);
      expect(next.outcome.values.stage).toBe('Lost');
    },
  );

  it('skips Automerge when the values equal what the source had seen (content compare)', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Won', amount: { value: 5, currency: 'EUR' } }), {});
    const heads = doc.getHeads();
    const again = doc.applyInbound(
      change(CRM_A, 2, { amount: { currency: 'EUR', value: 5 }, stage: 'Won' }),
      {},
    );
    expect(again.outcome.status).toBe('unchanged');
    expect(again.chunk).toBeNull();
    expect(doc.getHeads()).toEqual(heads);
    expect(doc.stats).toEqual({ merged: 1, unchanged: 1, duplicates: 0 });
    // An echo after a writeback is recognised the same way.
    doc.applyInbound(change(CRM_B, 3, { owner: 'Dana' }), {});
    doc.markSeen(CRM_A);
    expect(doc.applyInbound(change(CRM_A, 4, { owner: 'Dana', stage: 'Won' }), {}).outcome.status).toBe(
      'unchanged',
    );
    expect(doc.stats.unchanged).toBe(2);
    // Only the changed field of a full-record report is written.
    const partial = doc.applyInbound(change(CRM_A, 5, { owner: 'Dana', stage: 'Lost' }), {});
    expect(doc.history().at(-1)?.fields).toEqual({
      stage: { value: 'Lost', eventTime: new Date(T0 + 5000) },
    });
    expect(partial.outcome.status).toBe('applied');
  });

  it('a value written to a connection for another entity, of a field this one has none of, is owed the clear', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Won' }), {});
    doc.applyInbound(change(CRM_B, 2, { stage: 'Won' }), {});
    expect(owedOf(doc)).toEqual({ [CRM_A]: [], [CRM_B]: [] });
    // B reports the owner a write of another entity put there (an entity this one was merged
    // into, its write landed after the unmerge): our echo, not B's edit, so nothing merges.
    const { outcome } = doc.applyInbound(change(CRM_B, 3, {}, { echo: { owner: 'Dana' } }), {});
    expect(outcome.values).toEqual({ stage: 'Won' });
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: [], [CRM_B]: ['owner'] });
    expect(outcome.held.get(CRM_B)).toEqual({ owner: 'Dana' });
    // Cleared in B (its report of the clear after our write): nothing owed any more.
    doc.markSeen(CRM_B);
    expect(owedOf(doc)).toEqual({ [CRM_A]: [], [CRM_B]: [] });
  });

  it('a field with no value is owed the clear only where it was held', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Won', phone: '+1 555 0100' }), {});
    doc.applyInbound(change(CRM_B, 2, { stage: 'Won' }), {});
    doc.applyInbound(change(CRM_C, 2, { stage: 'Won' }), {});
    expect(owedOf(doc)).toEqual({ [CRM_A]: [], [CRM_B]: ['phone'], [CRM_C]: ['phone'] });
    // B got the phone written; C not yet.
    doc.markSeen(CRM_B);
    // A clears it: B holds it and is owed the clear; C never held one, so nothing is owed there
    // (an empty write would change nothing, and nothing would come back to say it landed).
    const { outcome } = doc.applyInbound(change(CRM_A, 3, { phone: null }), {});
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: [], [CRM_B]: ['phone'], [CRM_C]: [] });
    expect(outcome.held.get(CRM_B)).toEqual({ phone: '+1 555 0100' });
  });

  it('applies the same event key once', () => {
    const doc = EntityDocument.create('e');
    const first = change(CRM_A, 1, { stage: 'Won' });
    doc.applyInbound(first, {});
    doc.applyInbound(change(CRM_A, 2, { stage: 'Lost' }), {});
    expect(doc.applyInbound(first, {}).outcome.status).toBe('duplicate');
    expect(doc.state({}).values.stage).toBe('Lost');
    // Also after a reload from bytes: the keys live in the history.
    const reloaded = EntityDocument.load('e', doc.save(), []);
    expect(reloaded.applyInbound(first, {}).outcome.status).toBe('duplicate');
  });

  it('answers the value at past heads and times, and lists the history with origins', () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 10, { stage: 'Proposal' }), {});
    const early = doc.getHeads();
    doc.applyInbound(change(CRM_B, 20, { owner: 'Dana' }), {});
    doc.markSeen(CRM_A);
    doc.applyInbound(change(CRM_A, 30, { stage: 'Won' }), {});
    expect(doc.valueAt(early, {}).values).toEqual({ stage: 'Proposal' });
    expect(doc.valueAt(new Date(T0 + 25_000), {}).values).toEqual({ stage: 'Proposal', owner: 'Dana' });
    expect(doc.valueAt(new Date(T0), {}).values).toEqual({});
    expect(doc.state({}).values).toEqual({ stage: 'Won', owner: 'Dana' });
    expect(doc.history().map((h) => [h.source.id, h.fields])).toEqual([
      [CRM_A, { stage: { value: 'Proposal', eventTime: new Date(T0 + 10_000) } }],
      [CRM_B, { owner: { value: 'Dana', eventTime: new Date(T0 + 20_000) } }],
      [CRM_A, { stage: { value: 'Won', eventTime: new Date(T0 + 30_000) } }],
    ]);
  });

  it('reloads from a snapshot plus chunks and synced heads to the same state and owed fields', () => {
    const doc = EntityDocument.create('e');
    const chunks: Uint8Array[] = [];
    const push = (r: { chunk: Uint8Array | null }) => r.chunk && chunks.push(r.chunk);
    push(doc.applyInbound(change(CRM_A, 1, { stage: 'Proposal' }), {}));
    const snapshot = doc.save();
    chunks.length = 0;
    push(doc.applyInbound(change(CRM_B, 2, { owner: 'Dana', stage: 'Lost' }), {}));
    const synced = new Map([CRM_A, CRM_B].map((id) => [id, doc.syncedState(id)!] as const));
    const reloaded = EntityDocument.load('e', snapshot, chunks, synced);
    expect(reloaded.outcome({})).toEqual(doc.outcome({}));
    expect(reloaded.historyDigest()).toBe(doc.historyDigest());
  });

  it("a receipt of a write made at a recent merge's heads reads that view from the document's own copy, as Automerge would", () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_B, 1, { owner: 'Dana', stage: 'Lead' }), {});
    doc.applyInbound(change(CRM_A, 2, { stage: 'Proposal' }), {});
    // We write A's stage to B at these heads; A edits twice more before B's receipt comes back.
    const written = doc.getHeads();
    doc.applyInbound(change(CRM_A, 3, { amount: 100 }), {});
    doc.applyInbound(change(CRM_A, 4, { stage: 'Won' }), {});
    const before = new Map([CRM_A, CRM_B].map((id) => [id, doc.syncedState(id)!] as const));
    expect(automergeLoadsDuring(() => doc.markSeen(CRM_B, written))).toBe(0);
    // The same receipt on a copy that knows no recent views reads them through Automerge.
    const copy = EntityDocument.load('e', doc.save(), [], before);
    copy.markSeen(CRM_B, written);
    expect(doc.syncedState(CRM_B)).toEqual(copy.syncedState(CRM_B));
    expect(owedOf(doc)).toEqual(owedOf(copy));
    expect(owedOf(doc)[CRM_B]).toEqual(['amount', 'stage']);
    // B's next edit is placed where B stands: after what we wrote, before A's later edits.
    const next = change(CRM_B, 5, { stage: 'Lost' });
    expect(doc.applyInbound(next, {}).outcome.conflicts).toEqual(
      copy.applyInbound(next, {}).outcome.conflicts,
    );
    expect(doc.state({})).toEqual(copy.state({}));
    expect(doc.getHeads()).toEqual(copy.getHeads());
  });

  it('a receipt of a write made many merges ago reads the fields kept for the heads written, as Automerge would', () => {
    // The same history twice (the same event keys, so the same changes), the write's heads kept in one.
    const receiptOf = (keep: boolean) => {
      const doc = EntityDocument.create('e');
      const edit = (id: string, at: number, fields: Record<string, unknown>) =>
        doc.applyInbound(change(id, at, fields, { eventKey: `k${at}` }), {});
      edit(CRM_B, 1, { owner: 'Dana', stage: 'Lead' });
      edit(CRM_A, 2, { stage: 'Proposal' });
      const written = doc.getHeads();
      if (keep) doc.keepWritten(CRM_B, written);
      // A backlog: A edits a dozen times before B's receipt is folded.
      for (let at = 3; at < 15; at++) edit(CRM_A, at, { amount: at * 10 });
      return { doc, reads: automergeLoadsDuring(() => doc.markSeen(CRM_B, written)) };
    };
    const kept = receiptOf(true);
    const read = receiptOf(false);
    expect(kept.reads).toBe(0);
    // Without the kept fields the heads have left the recent ones: Automerge reads them.
    expect(read.reads).toBeGreaterThan(0);
    expect(kept.doc.syncedState(CRM_B)).toEqual(read.doc.syncedState(CRM_B));
    expect(owedOf(kept.doc)).toEqual(owedOf(read.doc));
    expect(owedOf(kept.doc)[CRM_B]).toEqual(['amount']);
    // B's next edit is placed where B stands in both.
    const next = change(CRM_B, 20, { stage: 'Lost' }, { eventKey: 'k20' });
    expect(kept.doc.applyInbound(next, {}).outcome.conflicts).toEqual(
      read.doc.applyInbound(next, {}).outcome.conflicts,
    );
    expect(kept.doc.state({})).toEqual(read.doc.state({}));
    expect(kept.doc.getHeads()).toEqual(read.doc.getHeads());
  });

  it("a connection's receipt lets go of the fields kept for its heads and its older ones, not another connection's", () => {
    const doc = EntityDocument.create('e');
    doc.applyInbound(change(CRM_A, 1, { stage: 'Lead' }), {});
    const first = doc.getHeads();
    doc.applyInbound(change(CRM_A, 2, { stage: 'Won' }), {});
    const second = doc.getHeads();
    const bare = doc.memoryBytes();
    doc.keepWritten(CRM_B, first);
    doc.keepWritten(CRM_C, first);
    doc.keepWritten(CRM_B, second);
    const kept = doc.memoryBytes();
    expect(kept).toBeGreaterThan(bare);
    // B's receipt of its later write: B's earlier write (set aside unsent) is no longer owed;
    // C's receipt of the first heads is still to come.
    doc.markSeen(CRM_B, second);
    const afterB = doc.memoryBytes();
    expect(afterB).toBeLessThan(kept);
    expect(afterB).toBeGreaterThan(bare);
    doc.markSeen(CRM_C, first);
    expect(doc.memoryBytes()).toBe(bare);
  });

  it('changes merged without a read through Automerge are all there, at the heads the document named, when one comes', () => {
    const doc = EntityDocument.create('e');
    const chunks: Uint8Array[] = [];
    const sources = [CRM_A, CRM_B, USER];
    for (let i = 1; i <= 30; i++) {
      const id = sources[i % 3]!;
      const edit =
        id === USER ? { ...change(CRM_A, i, {}), source: { kind: 'user' as const, id } } : change(id, i, {});
      const { chunk } = doc.applyInbound(
        { ...edit, eventKey: `k${i}`, fields: { [`f${i % 4}`]: `v${i}` } },
        {},
      );
      if (chunk) chunks.push(chunk);
      // Concurrent edits (sources that have not seen each other) leave several heads at times.
      if (i % 7 === 0 && id !== USER) doc.markSeen(id);
    }
    expect(chunks).toHaveLength(30);
    const named = doc.getHeads();
    const fromChunks = EntityDocument.load('e', null, chunks);
    expect(fromChunks.getHeads()).toEqual(named);
    // Reads through Automerge: they apply the deferred changes first.
    expect(doc.history()).toHaveLength(30);
    expect(doc.valueAt(named, {})).toEqual(doc.state({}));
    expect(doc.getHeads()).toEqual(named);
    const synced = new Map([CRM_A, CRM_B].map((id) => [id, doc.syncedState(id)!] as const));
    const reloaded = EntityDocument.load('e', doc.save(), [], synced);
    expect(reloaded.state({})).toEqual(doc.state({}));
    expect(owedOf(reloaded)).toEqual(owedOf(doc));
  });
});
