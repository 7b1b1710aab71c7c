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
  it('a key two entities hold names the same one first however the store listed them', () => {
    const settings = { ...DEFAULT_SETTINGS, defaultCountry: 'US' as const };
    const chosen = (holders: string[]) => {
      const index = new MatchIndex();
      index.setKey('email:ana@acme.com', holders);
      return new Resolver(index, settings).resolve(
        toMatchRecord('person', { email: 'ana@acme.com' }, settings),
        () => 'new',
      );
    };
    const one = chosen(['e-b', 'e-a']);
    const other = chosen(['e-a', 'e-b']);
    expect(one.entityId).toBe(other.entityId);
    expect(one.absorbs.map((a) => a.entityId)).toEqual(other.absorbs.map((a) => a.entityId));
  });

  it('links on a normalised email, or a phone with the same name, deterministically', () => {
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
      evidence: ['phone_name:4155550132|ana|lima'],
    });
    // A phone and no name, or another name: no link (a family's line, a switchboard).
    expect(add({ phone: '+1 415 555 0132' }).entityId).not.toBe(first.entityId);
  });

  it('does not treat a shared phone as identity when the names disagree', () => {
    const { add } = setup();
    const ana = add({ email: 'ana@acme.com', name: 'Ana Lima', phone: '+14155550100' });
    const boris = add({ email: 'boris@acme.com', name: 'Boris Stone', phone: '+14155550100' });
    expect(boris.decision).toBe('created');
    expect(boris.entityId).not.toBe(ana.entityId);
  });

  it('Maria and Mario Garcia, one company and one family phone, are two people: a review at most', () => {
    const { add } = setup();
    const maria = add({
      email: 'maria.garcia@acmewidgets.example',
      firstName: 'Maria',
      lastName: 'Garcia',
      company: 'Acme Widgets',
      phone: '+1 415 555 0100',
    });
    const mario = add({
      email: 'mario.garcia@acmewidgets.example',
      firstName: 'Mario',
      lastName: 'Garcia',
      company: 'Acme Widgets',
      phone: '+1 415 555 0100',
    });
    expect(mario.entityId).not.toBe(maria.entityId);
    expect(mario.decision).toBe('created-with-possible-duplicate');
    expect(mario.possibleDuplicates.map((c) => c.entityId)).toEqual([maria.entityId]);
    // Mario from another CRM, with his own address: Mario's.
    expect(add({ email: 'mario.garcia@acmewidgets.example', name: 'Mario Garcia' }).entityId).toBe(
      mario.entityId,
    );
  });

  it('a close name with a shared domain is evidence for review, never a link', () => {
    const { add } = setup();
    const ana = add({ email: 'ana.lima@acme.com', name: 'Ana Lima' });
    const typo = add({ email: 'alima@acme.com', name: 'Ana Lmia' });
    expect(typo.decision).toBe('created-with-possible-duplicate');
    expect(typo.entityId).not.toBe(ana.entityId);
    expect(typo.score).toBeGreaterThanOrEqual(0.9);
    expect(typo.possibleDuplicates).toEqual([
      expect.objectContaining({
        entityId: ana.entityId,
        evidence: expect.arrayContaining(['same-organisation-domain']),
      }),
    ]);
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

  it('creates when nothing is close; a record whose addresses name two entities joins them', () => {
    const { add } = setup();
    const work = add({ email: 'ana@acme.com', name: 'Ana Lima' });
    const home = add({ email: 'ana.lima@fastmail.example', name: 'Ana Lima', phone: '+14155550199' });
    expect(home.entityId).not.toBe(work.entityId);
    // Another CRM knows both of her addresses: one person, however the records came in.
    const both = add({ emails: ['ana@acme.com', 'ana.lima@fastmail.example'], name: 'Ana Lima' });
    expect(both).toMatchObject({ entityId: work.entityId, decision: 'linked-deterministic' });
    expect(both.absorbs).toEqual([
      { entityId: home.entityId, score: 1, evidence: ['email:ana.lima@fastmail.example'] },
    ]);
    // A phone alone names nobody: no join, no review.
    const boris = add({ email: 'boris@beta.io', name: 'Boris Stone', phone: '+14155550188' });
    const mixed = add({ email: 'ana@acme.com', phone: '+14155550188' });
    expect(mixed.entityId).toBe(work.entityId);
    expect(mixed.absorbs).toEqual([]);
    expect(mixed.possibleDuplicates.map((c) => c.entityId)).not.toContain(boris.entityId);
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

describe('Resolver: deals across connections', () => {
  function deals() {
    const resolver = new Resolver(new MatchIndex());
    let n = 0;
    const add = (source: string, fields: Record<string, unknown>) =>
      resolver.resolveAndCommit({ ...toMatchRecord('deal', fields), source }, () => `d${++n}`);
    return { resolver, add };
  }
  const deal = {
    name: 'Acme — Platform 2026',
    amount: 12500,
    stage: 'appointmentscheduled',
    pipeline: 'default',
    closeDate: '2026-03-01T17:00:00.000Z',
    ownerId: '101',
  };

  it('keys a deal on its normalised name with its amount and its close day, never on portal ids', () => {
    expect(toMatchRecord('deal', deal)).toMatchObject({
      keys: ['deal_amount:acme platform 2026|12500', 'deal_close:acme platform 2026|2026-03-01'],
      blocks: ['name:acme platform 2026'],
      name: 'acme platform 2026',
      displayName: 'Acme — Platform 2026',
    });
    expect(toMatchRecord('deal', { name: 'Acme', amount: '12500.00' }).keys).toEqual([
      'deal_amount:acme|12500',
    ]);
    expect(toMatchRecord('deal', { name: 'Acme' }).keys).toEqual([]);
    expect(toMatchRecord('deal', { amount: 5, closeDate: '2026-03-01' }).keys).toEqual([]);
  });

  it('links the same deal in two CRMs: other case, space, punctuation, owner, pipeline and stage', () => {
    const { add } = deals();
    const a = add('crm-a', deal);
    expect(a.decision).toBe('created');
    const b = add('crm-b', {
      name: '  ACME - platform   2026 ',
      amount: '12500',
      closeDate: '2026-03-01T09:30:00.000Z',
      stage: '1234567',
      pipeline: '998',
      ownerId: '77',
    });
    expect(b).toMatchObject({
      entityId: a.entityId,
      decision: 'linked-deterministic',
      evidence: ['deal_amount:acme platform 2026|12500'],
    });
  });

  it('links on the name and one fact when the other is missing on either side', () => {
    const { add } = deals();
    const a = add('crm-a', { name: 'Beta renewal', amount: 900 });
    expect(add('crm-b', { name: 'Beta Renewal', amount: 900, closeDate: '2026-05-01' }).entityId).toBe(
      a.entityId,
    );
    const c = add('crm-a', { name: 'Gamma pilot', closeDate: '2026-06-30T17:00:00.000Z' });
    expect(add('crm-b', { name: 'gamma pilot', closeDate: '2026-06-30T08:00:00.000Z' }).entityId).toBe(
      c.entityId,
    );
  });

  it('does not link when a fact both carry disagrees: a review at most', () => {
    const { add } = deals();
    const a = add('crm-a', deal);
    // Same name and close day, another amount.
    const b = add('crm-b', { ...deal, amount: 20000 });
    expect(b.entityId).not.toBe(a.entityId);
    expect(b.decision).toBe('created-with-possible-duplicate');
    expect(b.possibleDuplicates).toEqual([expect.objectContaining({ entityId: a.entityId })]);
    expect(b.score).toBeLessThan(0.9);
    // Same name and amount, another close day.
    const c = add('crm-c', { ...deal, closeDate: '2026-09-01T17:00:00.000Z' });
    expect([a.entityId, b.entityId]).not.toContain(c.entityId);
  });

  it('a name alone never links: no facts, or no fact in common', () => {
    const { add } = deals();
    const a = add('crm-a', { name: 'Delta expansion' });
    const b = add('crm-b', { name: 'Delta Expansion' });
    expect(b.entityId).not.toBe(a.entityId);
    expect(b.decision).toBe('created-with-possible-duplicate');
    const c = add('crm-a', { name: 'Eps deal', amount: 10 });
    const d = add('crm-b', { name: 'Eps deal', closeDate: '2026-01-01' });
    expect(d.entityId).not.toBe(c.entityId);
  });

  it('keeps two deals of one name in one connection apart, and links across CRMs only when one fits', () => {
    const { add } = deals();
    const first = add('crm-a', deal);
    const second = add('crm-a', { ...deal });
    expect(second.entityId).not.toBe(first.entityId);
    expect(second.decision).toBe('created-with-possible-duplicate');
    // Both CRM A deals fit a CRM B deal equally: no link, both for review.
    const ambiguous = add('crm-b', deal);
    expect(ambiguous.decision).toBe('created-with-possible-duplicate');
    expect(ambiguous.possibleDuplicates.map((c) => c.entityId).sort()).toEqual(
      [first.entityId, second.entityId].sort(),
    );
    // One CRM A deal of another amount: the one that fits links.
    const { add: add2 } = deals();
    const small = add2('crm-a', { ...deal, amount: 900 });
    const big = add2('crm-a', deal);
    expect(add2('crm-b', deal)).toMatchObject({ entityId: big.entityId, decision: 'linked-deterministic' });
    expect(add2('crm-b', { ...deal, amount: 900 }).entityId).toBe(small.entityId);
    // A second CRM B record never joins an entity that already has one from CRM B.
    expect(add2('crm-b', { ...deal })).toMatchObject({ decision: 'created-with-possible-duplicate' });
  });
});

describe('Resolver: meetings by iCalUID, or by title and start minute across connections', () => {
  function meetings() {
    const resolver = new Resolver(new MatchIndex());
    let n = 0;
    const add = (source: string, fields: Record<string, unknown>) =>
      resolver.resolveAndCommit({ ...toMatchRecord('meeting', fields), source }, () => `m${++n}`);
    return { add };
  }
  const event = {
    iCalUID: 'evt-1@google.com',
    title: 'Discovery call: Acme',
    startAt: '2026-12-01T10:00:00.000Z',
    endAt: '2026-12-01T10:30:00.000Z',
    attendees: [{ email: 'ana@acme.com', responseStatus: 'accepted' }],
  };
  const logged = {
    title: 'discovery call – ACME',
    startAt: '2026-12-01T10:00:42.000Z',
    endAt: '2026-12-01T11:00:00.000Z',
    outcome: 'scheduled',
    ownerId: '7',
  };

  it('keys the iCalUID first, then title and start minute in UTC', () => {
    expect(toMatchRecord('meeting', event).keys).toEqual([
      'ical_uid:evt-1@google.com',
      'meeting_slot:discovery call acme|2026-12-01T10:00',
    ]);
    expect(toMatchRecord('meeting', { title: 'Day off', startAt: '2026-12-24', allDay: true }).keys).toEqual([
      'meeting_slot:day off|2026-12-24T00:00',
    ]);
    expect(toMatchRecord('meeting', { title: 'x', startAt: '2026-12-01T11:00:00+01:00' }).keys).toEqual([
      'meeting_slot:x|2026-12-01T10:00',
    ]);
    expect(toMatchRecord('meeting', { title: 'No time' }).keys).toEqual([]);
  });

  it('links a meeting logged in a CRM to the calendar event, in either order', () => {
    const first = meetings();
    const g = first.add('gcal', event);
    expect(first.add('crm-a', logged)).toMatchObject({
      entityId: g.entityId,
      decision: 'linked-deterministic',
      evidence: ['meeting_slot:discovery call acme|2026-12-01T10:00'],
    });
    const second = meetings();
    const h = second.add('crm-a', logged);
    expect(second.add('gcal', event)).toMatchObject({
      entityId: h.entityId,
      decision: 'linked-deterministic',
    });
    // A copy of the event in another calendar links by iCalUID, whatever its title.
    expect(second.add('gcal-2', { ...event, title: 'Renamed' }).entityId).toBe(h.entityId);
  });

  it('does not link on another minute, another title, one connection, or another iCalUID', () => {
    const { add } = meetings();
    const g = add('gcal', event);
    expect(add('crm-a', { ...logged, startAt: '2026-12-01T10:15:00.000Z' }).entityId).not.toBe(g.entityId);
    expect(add('crm-a', { ...logged, title: 'Discovery call: Beta' }).entityId).not.toBe(g.entityId);
    // Two events of one title and time in one calendar are two events.
    expect(add('gcal', { ...event, iCalUID: undefined }).entityId).not.toBe(g.entityId);
    // Two events with their own iCalUIDs are two events, even in two calendars.
    expect(add('gcal-2', { ...event, iCalUID: 'evt-2@google.com' }).entityId).not.toBe(g.entityId);
  });
});

describe('Resolver: a phone number written without a country code', () => {
  // No default country: `(415) 555-0132` cannot be placed, so it is no deterministic key.
  function people() {
    const resolver = new Resolver(new MatchIndex());
    let n = 0;
    const add = (fields: Record<string, unknown>) =>
      resolver.resolveAndCommit(toMatchRecord('person', fields), () => `p${++n}`);
    return { add };
  }
  const work = {
    email: 'emily.carter@acme.com',
    firstName: 'Emily',
    lastName: 'Carter',
    phone: '+1 415 555 0132',
  };
  const personal = {
    email: 'emily.carter42@fastmail.example',
    firstName: 'Emily',
    lastName: 'Carter',
    phone: '(415) 555-0132',
  };

  it('links with the same name by its national digits, in either order (the demo’s 11th person)', () => {
    const one = people();
    const a = one.add(work);
    expect(one.add(personal)).toMatchObject({
      entityId: a.entityId,
      decision: 'linked-deterministic',
      evidence: ['phone_name:4155550132|carter|emily'],
    });
    const two = people();
    const b = two.add(personal);
    expect(two.add(work)).toMatchObject({ entityId: b.entityId, decision: 'linked-deterministic' });
    const three = people();
    const c = three.add({ ...work, phone: '020 7946 0012' });
    expect(three.add({ ...personal, phone: '+44 20 7946 0012' }).entityId).toBe(c.entityId);
  });

  it('is not enough for another name, and never deterministic', () => {
    const { add } = people();
    const a = add(work);
    const other = add({ ...personal, firstName: 'Megan', lastName: 'Brooks' });
    expect(other.entityId).not.toBe(a.entityId);
    expect(other.decision).toBe('created');
  });

  it('distinct addresses at one company with similar names stay apart', () => {
    const { add } = people();
    const a = add({ email: 'jon.smith@acme.com', name: 'Jon Smith', phone: '(415) 555-0100' });
    const b = add({ email: 'john.smyth@acme.com', name: 'John Smyth', phone: '(415) 555-0199' });
    expect(b.entityId).not.toBe(a.entityId);
    expect(b.decision).not.toBe('linked-fuzzy');
  });
});

describe('Resolver: a name never links two records of one connection', () => {
  it('two contacts of one CRM with one name and other emails stay two, for review; another CRM links', () => {
    const resolver = new Resolver(new MatchIndex());
    let n = 0;
    const add = (source: string, fields: Record<string, unknown>) =>
      resolver.resolveAndCommit({ ...toMatchRecord('person', fields), source }, () => `p${++n}`);
    const first = add('crm-a', { email: 'ana@acme.com', firstName: 'Ana', lastName: 'Lima' });
    const second = add('crm-a', { email: 'ana.lima@acme.com', firstName: 'Ana', lastName: 'Lima' });
    expect(second).toMatchObject({ decision: 'created-with-possible-duplicate', score: 1 });
    expect(second.entityId).not.toBe(first.entityId);
    expect(second.possibleDuplicates).toEqual([
      expect.objectContaining({
        entityId: first.entityId,
        evidence: expect.arrayContaining(['same-connection']),
      }),
    ]);
    // From another CRM the same name and organisation are no link either: a review.
    const third = add('crm-b', { email: 'a.lima@acme.com', firstName: 'Ana', lastName: 'Lima' });
    expect(third.decision).toBe('created-with-possible-duplicate');
    expect([first.entityId, second.entityId]).not.toContain(third.entityId);
  });
});
