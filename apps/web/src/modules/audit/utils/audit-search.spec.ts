import { describe, expect, it } from 'vitest';
import { actionLabel, detailLines, parseActor, parseAuditSearch, toAuditQuery } from './audit-search';

const ID = '3f1c2b7a-9d4e-4c1a-8f2b-6a7e5d4c3b2a';

describe('audit search', () => {
  it('keeps a known action and a well-formed actor, and drops the rest', () => {
    expect(parseAuditSearch({ action: 'api_key.created', actor: `member:${ID.toUpperCase()}` })).toEqual({
      action: 'api_key.created',
      actor: `member:${ID}`,
    });
    expect(parseAuditSearch({ action: 'connection.exploded', actor: 'robot:1' })).toEqual({});
    expect(parseAuditSearch({ action: 'toString', actor: `apiKey:${ID}:x` })).toEqual({});
  });

  it("gives the API's action, actorKind and actorId", () => {
    expect(toAuditQuery({ action: 'member.invited', actor: `apiKey:${ID}` })).toEqual({
      action: 'member.invited',
      actorKind: 'apiKey',
      actorId: ID,
    });
    expect(toAuditQuery({})).toEqual({});
    expect(parseActor('member:nope')).toBeUndefined();
  });

  it('names actions in words, an unknown one as spelled', () => {
    expect(actionLabel('dead_letter.retried')).toBe('Retried a dead letter');
    expect(actionLabel('something.new')).toBe('something.new');
  });

  it('lists details sorted, null as a dash', () => {
    expect(detailLines({ role: 'sales', email: 'a@b.c', name: null })).toEqual([
      'email: a@b.c',
      'name: —',
      'role: sales',
    ]);
  });
});
