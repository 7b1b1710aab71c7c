import { describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from './source-change';
import { type FieldValueType, fieldValueType, isUnifiedField, UNIFIED_FIELDS } from './unified-fields';

describe('unified field vocabulary', () => {
  it('describes every entity type, each field with a description', () => {
    expect(Object.keys(UNIFIED_FIELDS).sort()).toEqual([...ENTITY_TYPES].sort());
    for (const fields of Object.values(UNIFIED_FIELDS))
      for (const description of Object.values(fields)) expect(description.length).toBeGreaterThan(5);
  });

  it('answers membership per entity type', () => {
    expect(isUnifiedField('meeting', 'startAt')).toBe(true);
    expect(isUnifiedField('meeting', 'startTime')).toBe(false);
    expect(isUnifiedField('task', 'dueAt')).toBe(true);
    expect(isUnifiedField('task', 'toString')).toBe(false);
  });

  it("types every field's value as its description says", () => {
    // The description's own words for each type; text is everything else.
    const said: [FieldValueType, RegExp][] = [
      ['number', /\(number\)/],
      ['boolean', /\(boolean\)/],
      ['text list', /\(string\[\]\)/],
      ['attendee list', /^Participants: array of \{/],
    ];
    for (const [entityType, fields] of Object.entries(UNIFIED_FIELDS) as [
      keyof typeof UNIFIED_FIELDS,
      Record<string, string>,
    ][])
      for (const [field, description] of Object.entries(fields)) {
        const expected = said.find(([, words]) => words.test(description))?.[0] ?? 'text';
        expect([field, fieldValueType(entityType, field)]).toEqual([field, expected]);
      }
    expect(fieldValueType('person', 'hs_custom_tier')).toBe('text');
    expect(fieldValueType('deal', 'toString')).toBe('text');
  });
});
