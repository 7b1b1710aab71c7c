import { describe, expect, it } from 'vitest';
import { CRM_A, CRM_B, CRM_C, change, conn, T0, USER, WS } from '../test/fixtures';
import { EntityDocument } from './entity-document';
import type { PolicyMap } from './types';

const MERGE = '0190a000-0000-7000-8000-00000000aa01';
const UNMERGE = '0190a000-0000-7000-8000-00000000aa02';
const at = (s: number) => new Date(T0 + s * 1000);
const user = { kind: 'user', id: USER } as const;

/** Survivor S known to CRM A, absorbed X known to CRM B, each with a field of its own and one in common. */
function pair() {
  const survivor = EntityDocument.create('s');
  const absorbed = EntityDocument.create('x');
  survivor.applyInbound(change(CRM_A, 1, { email: 'ada@a.example', title: 'CTO' }, { eventKey: 'a:1' }), {});
  absorbed.applyInbound(change(CRM_B, 2, { phone: '+1 555 0100', title: 'VP' }, { eventKey: 'b:2' }), {});
  return { survivor, absorbed };
}

const merge = (survivor: EntityDocument, absorbed: EntityDocument, policies: PolicyMap = {}) =>
  survivor.absorb(
    absorbed,
    { operationId: MERGE, workspaceId: WS, at: at(10), connections: [CRM_B] },
    policies,
  );

describe('EntityDocument merges of entities', () => {
  it('absorb: takes fields only the absorbed had, keeps its own, settles common ones by policy, owes each side the other', () => {
    const { survivor, absorbed } = pair();
    const { outcome, chunk } = merge(survivor, absorbed);
    expect(chunk).not.toBeNull();
    // title: both had one; lww takes B's later value.
    expect(outcome.values).toEqual({ email: 'ada@a.example', phone: '+1 555 0100', title: 'VP' });
    // Provenance of a copy is its source and time, not the merge.
    expect(outcome.provenance.phone).toEqual({ source: conn(CRM_B), eventTime: at(2), conflicted: false });
    expect(outcome.provenance.email?.source).toEqual(conn(CRM_A));
    expect(Object.fromEntries(outcome.owed)).toEqual({ [CRM_A]: ['phone', 'title'], [CRM_B]: ['email'] });
    // What B holds of the owed fields is what it held of X (it never had an email).
    expect(outcome.held.get(CRM_B)).toEqual({});
    expect(outcome.conflicts.map((c) => [c.field, c.status, c.policy])).toEqual([
      ['title', 'resolved', 'lww'],
    ]);
  });

  it('absorb under priority and manual policies: the survivor’s source ranks first; a manual field waits', () => {
    const priority: PolicyMap = { title: { kind: 'priority', order: [CRM_A, CRM_B] } };
    const one = pair();
    expect(merge(one.survivor, one.absorbed, priority).outcome.values.title).toBe('CTO');
    const two = pair();
    const manual = merge(two.survivor, two.absorbed, { title: { kind: 'manual' } }).outcome;
    expect(manual.provenance.title?.conflicted).toBe(true);
    expect(manual.conflicts.map((c) => [c.field, c.status])).toEqual([['title', 'open']]);
    expect(two.survivor.standingConflictIds()).toEqual([manual.conflicts[0]?.id]);
  });

  it('absorb is recognised when delivered again, and replays to the same document', () => {
    const { survivor, absorbed } = pair();
    const first = merge(survivor, absorbed);
    expect(merge(survivor, absorbed).outcome.status).toBe('duplicate');
    const again = pair();
    const replayed = merge(again.survivor, again.absorbed);
    expect(again.survivor.getHeads().sort()).toEqual(survivor.getHeads().sort());
    expect(replayed.outcome.values).toEqual(first.outcome.values);
    // Reloaded from its bytes, the document reads the same.
    const loaded = EntityDocument.load(
      's',
      survivor.save(),
      [],
      new Map([[CRM_B, survivor.syncedState(CRM_B)!]]),
    );
    expect(loaded.outcome({}).values).toEqual(first.outcome.values);
    expect(Object.fromEntries(loaded.outcome({}).owed)).toEqual({ [CRM_B]: ['email'] });
  });

  it('an edit from a moved connection after the merge is its change here, concurrent with what it had not seen', () => {
    const { survivor, absorbed } = pair();
    merge(survivor, absorbed);
    const { outcome } = survivor.applyInbound(change(CRM_B, 20, { title: 'CEO', phone: '+1 555 0100' }), {});
    expect(outcome.values.title).toBe('CEO');
    // Its unchanged phone is what it held: no change, and it is still owed the email.
    expect(outcome.owed.get(CRM_B)).toEqual(['email']);
  });

  it('retract: gives back what the merge took in, keeps the survivor’s own values and later edits', () => {
    const { survivor, absorbed } = pair();
    merge(survivor, absorbed);
    survivor.markSeen(CRM_A); // the union was written to A
    const { outcome } = survivor.retract(
      { mergeOperationId: MERGE, operationId: UNMERGE, workspaceId: WS, by: user, at: at(30) },
      {},
    );
    expect(outcome.values).toEqual({ email: 'ada@a.example', phone: null, title: 'CTO' });
    expect(outcome.provenance.phone?.source).toEqual(user);
    expect(outcome.provenance.title?.source).toEqual(conn(CRM_A));
    // A holds the union it was written: it is owed the clear and its own title back.
    expect(outcome.owed.get(CRM_A)).toEqual(['phone', 'title']);
    expect(survivor.standingConflictIds()).toEqual([]);
    const again = survivor.retract(
      { mergeOperationId: MERGE, operationId: UNMERGE, workspaceId: WS, by: user, at: at(30) },
      {},
    );
    expect(again.outcome.status).toBe('duplicate');

    // An edit made after the merge replaced the copy: it stays.
    const other = pair();
    merge(other.survivor, other.absorbed);
    other.survivor.markSeen(CRM_A);
    other.survivor.applyInbound(change(CRM_A, 20, { phone: '+1 555 0199' }), {});
    const kept = other.survivor.retract(
      { mergeOperationId: MERGE, operationId: UNMERGE, workspaceId: WS, by: user, at: at(30) },
      {},
    );
    expect(kept.outcome.values.phone).toBe('+1 555 0199');
  });

  it('splitOff: the returning connection brings its edits made while merged, and is owed the split-off values', () => {
    const { survivor, absorbed } = pair();
    merge(survivor, absorbed);
    survivor.markSeen(CRM_B); // the union was written to B: it holds A's email and the winning title
    survivor.applyInbound(change(CRM_B, 20, { company: 'Analytical Engines' }), {});
    const { outcome } = absorbed.splitOff(
      survivor,
      {
        operationId: UNMERGE,
        workspaceId: WS,
        entityType: 'person',
        connections: [CRM_B],
        by: user,
        at: at(30),
      },
      {},
    );
    expect(outcome.values).toEqual({
      company: 'Analytical Engines',
      email: null,
      phone: '+1 555 0100',
      title: 'VP',
    });
    // B still holds the survivor's email: cleared; its title is X's own again (nothing owed).
    expect(outcome.owed.get(CRM_B)).toEqual(['email']);
    expect(outcome.held.get(CRM_B)).toEqual({ email: 'ada@a.example' });
  });

  it('retract: values of its own that a copy stood beside and that differ are reported as the conflict they now are', () => {
    const manual: PolicyMap = { title: { kind: 'manual' } };
    const { survivor, absorbed } = pair();
    merge(survivor, absorbed, manual);
    // C, new to the survivor, writes a title concurrent with A's and the copy of B's.
    const three = survivor.applyInbound(change(CRM_C, 20, { title: 'CEO' }, { eventKey: 'c:20' }), manual);
    expect(three.outcome.conflicts.map((c) => c.candidates.length)).toEqual([3]);
    const { outcome } = survivor.retract(
      { mergeOperationId: MERGE, operationId: UNMERGE, workspaceId: WS, by: user, at: at(30) },
      manual,
    );
    expect(
      outcome.conflicts.map((c) => [c.field, c.status, c.candidates.map((x) => x.value).sort()]),
    ).toEqual([['title', 'open', ['CEO', 'CTO']]]);
    expect(survivor.standingConflictIds()).toEqual(outcome.conflicts.map((c) => c.id));
  });

  it('a connection beside a copy of its own older value holds its latest, whether the document is cached or loaded', () => {
    const manual: PolicyMap = { title: { kind: 'manual' } };
    const survivor = EntityDocument.create('s');
    const absorbed = EntityDocument.create('x');
    const chunks: (Uint8Array | null)[] = [];
    chunks.push(
      survivor.applyInbound(change(CRM_A, 1, { email: 'ada@a.example' }, { eventKey: 'a:1' }), manual).chunk,
    );
    absorbed.applyInbound(change(CRM_B, 2, { title: 'VP' }, { eventKey: 'b:2' }), manual);
    chunks.push(merge(survivor, absorbed, manual).chunk);
    // B, moved here, writes a title not having seen the copy of its own: both stand, open.
    chunks.push(
      survivor.applyInbound(change(CRM_B, 20, { title: 'Chief' }, { eventKey: 'b:20' }), manual).chunk,
    );
    const seen = survivor.markSeen(CRM_B, survivor.getHeads());
    // The copy goes; B's latest title stands alone, and B holds it: nothing owed.
    chunks.push(
      survivor.retract(
        { mergeOperationId: MERGE, operationId: UNMERGE, workspaceId: WS, by: user, at: at(30) },
        manual,
      ).chunk,
    );
    const cached = survivor.outcome(manual);
    expect(cached.values.title).toBe('Chief');
    expect(cached.owed.get(CRM_B)).toEqual([]);
    const loaded = EntityDocument.load(
      's',
      null,
      chunks.filter((c) => c !== null),
      new Map([[CRM_B, seen!]]),
    ).outcome(manual);
    expect(loaded.owed.get(CRM_B)).toEqual(cached.owed.get(CRM_B));
  });
});
