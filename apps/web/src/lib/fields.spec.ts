import { describe, expect, it } from 'vitest';
// The one file, not the package: @syncline/core's index pulls in Prisma and the logger.
import { UNIFIED_FIELDS } from '../../../../libs/core/src/unified-fields';
import { FIELDS, fieldLabel, fieldSpec, RECORD_TYPES } from './fields';

describe('web field specs', () => {
  it.each(RECORD_TYPES)('cover exactly the unified fields of a %s', (type) => {
    expect(Object.keys(FIELDS[type]).sort()).toEqual(Object.keys(UNIFIED_FIELDS[type]).sort());
  });

  it('give every field a label of its own within its type', () => {
    for (const type of RECORD_TYPES) {
      const labels = Object.values(FIELDS[type]).map((spec) => spec.label);
      expect(new Set(labels).size).toBe(labels.length);
      expect(labels.every((label) => label.trim() !== '')).toBe(true);
    }
  });

  it('show a custom field by its name, as free text', () => {
    expect(fieldLabel('person', 'hs_custom_score')).toBe('hs_custom_score');
    expect(fieldSpec('person', 'hs_custom_score')).toEqual({ label: 'hs_custom_score', input: 'text' });
    // Not a prototype key taken for a field.
    expect(fieldLabel('deal', 'toString')).toBe('toString');
    expect(fieldSpec('deal', 'amount').input).toBe('number');
  });
});
