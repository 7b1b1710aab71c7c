import { describe, expect, it } from 'vitest';
import {
  backfillPercent,
  entityLabel,
  fieldsLine,
  opCountWords,
  plural,
  showValue,
  systemName,
  waitingLine,
  writeLines,
} from './report';

describe('showValue', () => {
  it('shows empty values as a dash and scalars as written', () => {
    expect(showValue(null)).toBe('—');
    expect(showValue(undefined)).toBe('—');
    expect(showValue('')).toBe('—');
    expect(showValue('Ada')).toBe('Ada');
    expect(showValue(1200.5)).toBe('1200.5');
    expect(showValue(false)).toBe('false');
  });
  it('joins lists and writes objects as JSON, cut to one short line', () => {
    expect(showValue(['a@x.test', 'b@x.test'])).toBe('a@x.test, b@x.test');
    expect(showValue([])).toBe('—');
    expect(showValue({ id: 'c1' })).toBe('{"id":"c1"}');
    const long = showValue('x'.repeat(500));
    expect(long).toHaveLength(120);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('opCountWords', () => {
  it('names each operation in order, singular or plural, leaving out zeros', () => {
    expect(opCountWords({ update: 1, create: 3, delete: 0 })).toBe('3 creates, 1 update');
    expect(opCountWords({ associate: 2, dissociate: 1 })).toBe('2 associations added, 1 association removed');
    expect(opCountWords({ archive: 2, create: 1 })).toBe('1 create, 2 archive');
    expect(opCountWords({})).toBe('no writes');
  });
});

describe('writeLines', () => {
  const entry = (over: Partial<Parameters<typeof writeLines>[0][number]>) => ({
    connectionId: 'c',
    provider: 'hubspot',
    displayName: null,
    self: false,
    total: 1,
    counts: { update: 1 },
    ...over,
  });
  it('puts the connection itself first, names systems, and leaves out systems with nothing to write', () => {
    expect(
      writeLines([
        entry({ displayName: 'CRM A', counts: { update: 2 }, total: 2 }),
        entry({ displayName: 'Calendar', provider: 'google-calendar', total: 0, counts: {} }),
        entry({ displayName: 'CRM B', self: true, counts: { create: 3 }, total: 3 }),
      ]),
    ).toEqual(['CRM B (this connection): 3 creates', 'CRM A: 2 updates']);
  });
  it('falls back to the provider name', () => {
    expect(systemName({ provider: 'hubspot', displayName: null })).toBe('HubSpot');
    expect(systemName({ provider: 'hubspot', displayName: '' })).toBe('HubSpot');
  });
});

describe('backfillPercent', () => {
  it('is null without a total, and clamped to 0..100', () => {
    expect(backfillPercent({ seen: 5, estimatedTotal: null })).toBeNull();
    expect(backfillPercent({ seen: 5, estimatedTotal: 0 })).toBeNull();
    expect(backfillPercent({ seen: 1, estimatedTotal: 3 })).toBe(33);
    expect(backfillPercent({ seen: 12, estimatedTotal: 10 })).toBe(100);
  });
});

describe('labels', () => {
  it('names entity types and counts', () => {
    expect(entityLabel('email_activity')).toBe('Email');
    expect(entityLabel('widget')).toBe('widget');
    expect(plural(1, 'record')).toBe('1 record');
    expect(plural(2, 'property', 'properties')).toBe('2 properties');
  });
  it('writes fields under their labels where the app has them', () => {
    expect(fieldsLine('person', { lastName: 'Johnson', leadScore: 7 })).toBe(
      'Last name: Johnson · leadScore: 7',
    );
    expect(fieldsLine('meeting', { title: 'Kick-off' })).toBe('title: Kick-off');
    expect(fieldsLine('person', {})).toBe('—');
  });
});

describe('waitingLine', () => {
  const crm = { provider: 'hubspot', displayName: 'CRM A' };
  it('says why a system is owed no creates yet', () => {
    expect(waitingLine({ ...crm, status: 'backfilling', reconciled: false })).toBe(
      'CRM A is on its first sync',
    );
    expect(waitingLine({ ...crm, status: 'live', reconciled: false })).toBe(
      'CRM A is finishing its first sync',
    );
    expect(waitingLine({ ...crm, status: 'paused', reconciled: true })).toBe('CRM A is paused');
    expect(waitingLine({ ...crm, status: 'needs_reauth', reconciled: true })).toBe(
      'CRM A is waiting for its credentials',
    );
  });
  it('names an unnamed system by its provider', () => {
    expect(
      waitingLine({ provider: 'hubspot', displayName: null, status: 'backfilling', reconciled: false }),
    ).toMatch(/ is on its first sync$/);
  });
});
