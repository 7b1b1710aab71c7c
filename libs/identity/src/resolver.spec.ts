import { describe, expect, it } from 'vitest';
import { MatchIndex } from './match-index';
import { DEFAULT_SETTINGS, toMatchRecord } from './match-record';
import { Resolver } from './resolver';

function setup() {
  const settings = { ...DEFAULT_SETTINGS, defaultCountry: 'US' as const };
  const resolver = new Resolver(new MatchIndex(), settings);
  let n = 0;
  const add = (fields: Record<string, unknown>) =>
    resolver.resolveAndCommit(toMatchRecord('person', fields, settings), () => `e${++n}`);
  return { resolver, add };
}

describe('Resolver', () => {
  it('links on a normalised email or phone, deterministically', () => {
    const { add } = setup();
    const first = add({ email: 'ana@acme.com', firstName: 'Ana', lastName: 'Lima', phone: '(415) 555-0132' });
    expect(first.decision).toBe('created');
    expect(add({ email: ' ANA@acme.com' })).toMatchObject({
      entityId: first.entityId,
      decision: 'linked-deterministic',
      evidence: ['email:ana@acme.com'],
      score: 1,
    });
    expect(add({ phone: '+1 415 555 0132', name: 'Lima Ana' })).toMatchObject({
      entityId: first.entityId,
      decision: 'linked-deterministic',
      evidence: ['phone:+14155550132'],
    });
  });

  it('does not treat a shared phone as identity when the names disagree', () => {
    const { add } = setup();
    const ana = add({ email: 'ana@acme.com', name: 'Ana Lima', phone: '+14155550100' });
    const boris = add({ email: 'boris@acme.com', name: 'Boris Stone', phone: '+14155550100' });
    expect(boris.decision).toBe('created');
    expect(boris.entityId).not.toBe(ana.entityId);
  });

  it('links a close name with corroborating evidence above the threshold', () => {
    const { add } = setup();
    const ana = add({ email: 'ana.lima@acme.com', name: 'Ana Lima' });
    const typo = add({ email: 'alima@acme.com', name: 'Ana Lmia' });
    expect(typo.decision).toBe('linked-fuzzy');
    expect(typo.entityId).toBe(ana.entityId);
    expect(typo.score).toBeGreaterThanOrEqual(0.9);
    expect(typo.evidence).toContain('same-organisation-domain');
  });

  it('in the grey zone creates a new entity and flags a possible duplicate, never merges', () => {
    const { add } = setup();
    const ana = add({ email: 'ana.lima@acme.com', name: 'Ana Lima' });
    // Same name, nothing else in common: name alone is never enough.
    const other = add({ email: 'analima77@gmail.com', name: 'Ana Lima' });
    expect(other.decision).toBe('created-with-possible-duplicate');
    expect(other.entityId).not.toBe(ana.entityId);
    expect(other.possibleDuplicates).toEqual([
      expect.objectContaining({ entityId: ana.entityId, evidence: ['name-similarity:1.000'] }),
    ]);
    expect(other.score).toBeGreaterThanOrEqual(0.78);
    expect(other.score).toBeLessThan(0.9);
  });

  it('creates when nothing is close, and flags entities whose keys conflict', () => {
    const { add } = setup();
    const ana = add({ email: 'ana@acme.com', name: 'Ana Lima' });
    const boris = add({ email: 'boris@beta.io', name: 'Boris Stone', phone: '+14155550199' });
    expect(boris.decision).toBe('created');
    // Ana's email, Boris's phone: the email wins and the pair goes to review.
    const both = add({ email: 'ana@acme.com', phone: '+14155550199' });
    expect(both.entityId).toBe(ana.entityId);
    expect(both.possibleDuplicates.map((c) => c.entityId)).toEqual([boris.entityId]);
  });

  it('follows merges in the index', () => {
    const { resolver, add } = setup();
    const a = add({ email: 'a@acme.com', name: 'Ana Lima' });
    const b = add({ email: 'b@beta.io', name: 'Ana Lima' });
    resolver.index.merge(b.entityId, a.entityId);
    expect(add({ email: 'b@beta.io' }).entityId).toBe(a.entityId);
    resolver.index.unmerge(b.entityId);
    expect(add({ email: 'b@beta.io' }).entityId).toBe(b.entityId);
  });

  it('resolves companies by registrable domain and meetings by iCalUID', () => {
    const resolver = new Resolver(new MatchIndex());
    let n = 0;
    const id = () => `c${++n}`;
    const acme = resolver.resolveAndCommit(
      toMatchRecord('company', { name: 'Acme', domain: 'acme.co.uk' }),
      id,
    );
    const again = resolver.resolveAndCommit(
      toMatchRecord('company', { name: 'ACME Ltd', website: 'https://mail.acme.co.uk' }),
      id,
    );
    expect(again).toMatchObject({ entityId: acme.entityId, decision: 'linked-deterministic' });
    const meetings = new Resolver(new MatchIndex());
    const m1 = meetings.resolveAndCommit(toMatchRecord('meeting', { iCalUID: 'x@google.com' }), id);
    expect(
      meetings.resolveAndCommit(toMatchRecord('meeting', { iCalUID: 'x@google.com' }), id).entityId,
    ).toBe(m1.entityId);
  });
});
