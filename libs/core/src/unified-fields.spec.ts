import { describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from './source-change';
import { isUnifiedField, UNIFIED_FIELDS } from './unified-fields';

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
});
