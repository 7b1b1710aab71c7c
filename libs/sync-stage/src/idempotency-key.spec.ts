import { describe, expect, it } from 'vitest';
import {
  associateKey,
  asUpdateKey,
  createKey,
  deleteKey,
  dissociateKey,
  foldArchiveKey,
  headsDigest,
  providerMergeKey,
  updateKey,
  updateKeyByValues,
} from './idempotency-key';

const ENTITY = '0190a1b2-0000-7000-8000-000000000001';
const CONNECTION = '0190a1b2-0000-7000-8000-00000000000c';

// Keys are stored (outbox, write_receipt, relation_mirror): a change to their text owes every
// write again under a new key. These pin them.
describe('idempotency keys', () => {
  it('keys a create, an update and a delete by entity and connection', () => {
    expect(createKey(ENTITY, CONNECTION)).toBe(`${ENTITY}.${CONNECTION}.create`);
    expect(deleteKey(ENTITY, CONNECTION)).toBe(`${ENTITY}.${CONNECTION}.delete`);
    expect(updateKey(ENTITY, CONNECTION, ['b', 'a'])).toBe(`${ENTITY}.${CONNECTION}.HrfFTVKDG7_olCrwscVrdA`);
  });

  it('keys the final values a replay owes by the update key and a digest of the values, in any order', () => {
    const key = updateKeyByValues(ENTITY, CONNECTION, ['b', 'a'], { phone: null, jobTitle: 'CTO' });
    expect(key).toBe(`${ENTITY}.${CONNECTION}.HrfFTVKDG7_olCrwscVrdA.KIcOUGBo8BzjYIcW`);
    expect(updateKeyByValues(ENTITY, CONNECTION, ['b', 'a'], { jobTitle: 'CTO', phone: null })).toBe(key);
    expect(updateKeyByValues(ENTITY, CONNECTION, ['b', 'a'], { jobTitle: 'CEO', phone: null })).not.toBe(key);
  });

  it('digests heads whatever their order', () => {
    expect(headsDigest(['a', 'b'])).toBe(headsDigest(['b', 'a']));
    expect(headsDigest(['a', 'b'])).toHaveLength(22);
    expect(headsDigest(['a'])).not.toBe(headsDigest(['a', 'b']));
  });

  it('keys what a merge owes by operation and record', () => {
    expect(foldArchiveKey(ENTITY, CONNECTION, 'op-1', '42')).toBe(`${ENTITY}.${CONNECTION}.fold:op-1:42`);
    expect(providerMergeKey(ENTITY, CONNECTION, 'op-1', '42')).toBe(`${ENTITY}.${CONNECTION}.merge:op-1:42`);
  });

  it('keys a create sent as an update by the heads it carries', () => {
    expect(asUpdateKey('k', ['abcdefghij', 'klmnopqrst'])).toBe('k.as-update.abcdefghijklmnop');
  });

  it('keys an association by its pair and generation, and its removal by the association', () => {
    const associate = associateKey(ENTITY, CONNECTION, { type: 'company', id: 'c1' }, 'g1');
    expect(associate).toMatch(new RegExp(`^${ENTITY}\\.${CONNECTION}\\.associate\\.[\\w-]{22}$`));
    expect(associateKey(ENTITY, CONNECTION, { type: 'company', id: 'c1' }, 'g2')).not.toBe(associate);
    expect(dissociateKey(ENTITY, CONNECTION, associate)).toMatch(/\.dissociate\.[\w-]{22}$/);
  });
});
