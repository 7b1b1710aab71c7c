import { describe, expect, it } from 'vitest';
import { judgeExistingRecord } from './existing-record';

const E = '0b3c5a4e-1d2f-4e6a-8b9c-0d1e2f3a4b5c';
const F = '7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910';
const ada = { entityId: E, entityType: 'person' as const, fields: { email: ' Ada@Analytical.example ' } };

describe('judgeExistingRecord', () => {
  it('links a record linked nowhere that holds the same normalised address', () => {
    expect(judgeExistingRecord(ada, { fields: { email: 'ada@analytical.example' } }, undefined)).toEqual({
      kind: 'link',
      evidence: ['email:ada@analytical.example'],
    });
  });

  it('links a record carrying our entity id (an earlier create of this entity), whatever its address', () => {
    expect(
      judgeExistingRecord(
        ada,
        { fields: { email: 'countess@byron.example' }, origin: { synclineId: E.toUpperCase() } },
        undefined,
      ),
    ).toEqual({ kind: 'link', evidence: [`syncline_id:${E}`] });
  });

  it('links a company by its domain, as identity normalises it', () => {
    const acme = {
      entityId: E,
      entityType: 'company' as const,
      fields: { name: 'Acme', domain: 'www.Acme.com' },
    };
    expect(
      judgeExistingRecord(acme, { fields: { name: 'ACME Ltd', domain: 'acme.com' } }, undefined),
    ).toEqual({
      kind: 'link',
      evidence: ['domain:acme.com'],
    });
  });

  it('puts the pair up for review when the record is another entity’s, shared key or not', () => {
    expect(judgeExistingRecord(ada, { fields: { email: 'ada@analytical.example' } }, F)).toEqual({
      kind: 'review',
      otherEntityId: F,
      evidence: ['provider-refused-create', 'email:ada@analytical.example'],
    });
    expect(judgeExistingRecord(ada, { fields: { email: 'augusta@byron.example' } }, F)).toEqual({
      kind: 'review',
      otherEntityId: F,
      evidence: ['provider-refused-create', 'email:ada@analytical.example'],
    });
  });

  it('is done when the record is linked to the entity already', () => {
    expect(judgeExistingRecord(ada, { fields: {} }, E)).toEqual({ kind: 'linked-already' });
  });

  it('leaves a record linked nowhere whose keys do not agree to identity', () => {
    // A phone number (or a name) is no key that makes the record the entity's.
    const record = { fields: { email: 'other@analytical.example', phone: '+442079460000' } };
    expect(
      judgeExistingRecord(
        { ...ada, fields: { ...ada.fields, phone: '+44 20 7946 0000' } },
        record,
        undefined,
      ),
    ).toEqual({ kind: 'unresolved', evidence: ['provider-refused-create', 'email:ada@analytical.example'] });
    expect(judgeExistingRecord(ada, { fields: {}, origin: { synclineId: F } }, undefined)).toMatchObject({
      kind: 'unresolved',
    });
    const deal = { entityId: E, entityType: 'deal' as const, fields: { name: 'Renewal', amount: 100 } };
    expect(judgeExistingRecord(deal, { fields: { name: 'Renewal', amount: 100 } }, undefined)).toEqual({
      kind: 'unresolved',
      evidence: ['provider-refused-create'],
    });
  });
});
