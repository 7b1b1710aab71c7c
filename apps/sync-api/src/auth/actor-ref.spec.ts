import { describe, expect, it } from 'vitest';
import { actorRef, parseActorRef, toActorView } from './actor-ref';

const ID = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

describe('actor references', () => {
  it('round-trips members and keys', () => {
    expect(parseActorRef(actorRef({ kind: 'member', id: ID }))).toEqual({ kind: 'member', id: ID });
    expect(parseActorRef(actorRef({ kind: 'apiKey', id: ID }))).toEqual({ kind: 'apiKey', id: ID });
  });

  it('keeps a key as its bare uuid, and reads key:<uuid> too', () => {
    expect(actorRef({ kind: 'apiKey', id: ID })).toBe(ID);
    expect(actorRef({ kind: 'member', id: ID })).toBe(`member:${ID}`);
    expect(parseActorRef(`key:${ID}`)).toEqual({ kind: 'apiKey', id: ID });
  });

  it('reads a bare uuid (written before members) as an API key', () => {
    expect(parseActorRef(ID)).toEqual({ kind: 'apiKey', id: ID });
    expect(toActorView(ID)).toEqual({ kind: 'apiKey', id: ID, keyId: ID });
  });

  it('names nothing for other text', () => {
    for (const ref of [null, undefined, '', 'connection:x', `robot:${ID}`, 'member:not-a-uuid']) {
      expect(parseActorRef(ref)).toBeNull();
    }
  });
});
