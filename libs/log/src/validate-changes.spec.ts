import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldTimesToJson, validateChanges } from './validate-changes';

const WORKSPACE = '6f1c2c9e-5d38-4c1b-9a55-0d6f1e2a3b4c';
const CONNECTION = '0b7e4f3a-2c1d-4e5f-8a9b-1c2d3e4f5a6b';

describe('fieldTimesToJson', () => {
  it('writes what JSON.stringify writes, for any keys and times (shared, distinct or invalid)', () => {
    const time = fc.oneof(
      fc.date({ noInvalidDate: true }),
      fc.constant(new Date(Number.NaN)),
      fc.constant(new Date('2026-12-05T10:00:00.000Z')),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), time), (times) => {
        expect(fieldTimesToJson(times)).toBe(JSON.stringify(times));
      }),
      { numRuns: 500 },
    );
  });

  it('writes an empty record as {}', () => {
    expect(fieldTimesToJson({})).toBe('{}');
  });

  it("leaves out the fields timed at the event's time, which is what a field without a time reads as", () => {
    const event = new Date('2026-12-05T10:00:00Z');
    const times = { subject: new Date(event), to: new Date('2026-12-05T09:00:00Z'), from: event };
    expect(fieldTimesToJson(times, event)).toBe('{"to":"2026-12-05T09:00:00.000Z"}');
    expect(fieldTimesToJson({ subject: event }, event)).toBe('{}');
  });
});

describe('validateChanges', () => {
  const change = (overrides: Record<string, unknown> = {}) => ({
    workspaceId: WORKSPACE,
    connectionId: CONNECTION,
    entityType: 'email_activity',
    externalId: 'AAMkAGI2=',
    op: 'upsert',
    eventKey: 'AAMkAGI2=:CQAAAB',
    eventTime: '2026-12-05T10:00:00Z',
    fields: { subject: 'Re: proposal', to: ['bob@fabrikam.example'] },
    fieldTimes: { subject: '2026-12-05T10:00:00Z', to: new Date('2026-12-05T09:00:00Z') },
    ...overrides,
  });

  it('serialises a change once, its field times as JSON.stringify would', () => {
    const result = validateChanges([change({ eventTime: '2026-12-05T11:00:00Z' })]);
    if (!result.ok) throw new Error(result.error.message);
    const [prepared] = result.value;
    expect(prepared!.fieldTimesJson).toBe(
      '{"subject":"2026-12-05T10:00:00.000Z","to":"2026-12-05T09:00:00.000Z"}',
    );
    expect(JSON.parse(prepared!.fieldsJson)).toEqual({
      subject: 'Re: proposal',
      to: ['bob@fabrikam.example'],
    });
  });

  it('refuses a field time that is no date, naming the change and the field', () => {
    const result = validateChanges([change(), change({ fieldTimes: { subject: 'yesterday' } })]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.index).toBe(1);
    expect(result.error.message).toMatch(/^change 1: fieldTimes\.subject: /);
  });

  it('refuses fields that are no object or have an empty name', () => {
    for (const [fields, message] of [
      [['a'], /^change 0: fields: expected an object/],
      [{ '': 'x' }, /^change 0: fields\.: a field name cannot be empty/],
    ] as const) {
      const result = validateChanges([change({ fields })]);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toMatch(message);
    }
  });

  it('gives fields sharing a time one Date each, equal to it', () => {
    const at = new Date('2026-12-05T10:00:00Z');
    const result = validateChanges([
      change({ fieldTimes: { a: at, b: at, c: '2026-12-05T11:00:00+01:00' } }),
    ]);
    if (!result.ok) throw new Error(result.error.message);
    const times = result.value[0]!.change.fieldTimes;
    expect(Object.values(times).map((d) => d.toISOString())).toEqual([
      '2026-12-05T10:00:00.000Z',
      '2026-12-05T10:00:00.000Z',
      '2026-12-05T10:00:00.000Z',
    ]);
    expect(times.a).not.toBe(at);
  });

  it('refuses text PostgreSQL cannot store, escaped or not, and keeps an escaped backslash', () => {
    const nul = validateChanges([change({ fields: { subject: 'a\u0000b' } })]);
    expect(nul.ok).toBe(false);
    const lone = validateChanges([change({ fields: { subject: 'a\ud800b' } })]);
    expect(lone.ok).toBe(false);
    const text = validateChanges([change({ fields: { subject: 'a literal \\u0000 written out' } })]);
    expect(text.ok).toBe(true);
  });
});
