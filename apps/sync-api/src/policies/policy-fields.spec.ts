import { ENTITY_TYPES, UNIFIED_FIELDS } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { customFieldsOf, isListValued, LIST_VALUED_FIELDS } from './policy-fields';

describe('policy fields', () => {
  it('lists as list-valued exactly the unified fields described as arrays', () => {
    for (const entityType of ENTITY_TYPES) {
      const described = Object.entries(UNIFIED_FIELDS[entityType] as Record<string, string>)
        .filter(([, description]) => /\[\]|\barray\b/i.test(description))
        .map(([field]) => field)
        .sort();
      expect([...LIST_VALUED_FIELDS[entityType]].sort(), entityType).toEqual(described);
    }
    expect(isListValued('meeting', 'attendees')).toBe(true);
    expect(isListValued('person', 'email')).toBe(false);
  });

  it("takes custom fields from the mappings of the type's prefix, leaving unified ones out", () => {
    const fields = customFieldsOf('person', [
      { 'person.leadScore': 'lead_score', 'person.phone': 'mobilephone', 'deal.forecast': 'hs_forecast' },
      { 'person.nps': 'nps_score', 'person.': 'nothing' },
      null,
      ['person.ignored'],
    ]);
    expect([...fields].sort()).toEqual(['leadScore', 'nps']);
    expect([...customFieldsOf('deal', [{ 'deal.forecast': 'hs_forecast' }])]).toEqual(['forecast']);
  });
});
