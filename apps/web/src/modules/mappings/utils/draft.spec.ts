import { describe, expect, it } from 'vitest';
import { type FieldState, isDirty, problemsByRow, removeMapping, rowsOf, setProperty } from './draft';

const email: FieldState = {
  field: 'email',
  property: 'email',
  custom: false,
  mapped: true,
  defaultProperty: 'email',
};
const jobTitle: FieldState = {
  field: 'jobTitle',
  property: 'jobtitle',
  custom: false,
  mapped: true,
  defaultProperty: 'jobtitle',
};

describe('setProperty', () => {
  it('adds an override for a property other than the default, and drops it back at the default', () => {
    const moved = setProperty(
      [],
      { entityType: 'person', field: 'jobTitle', defaultProperty: 'jobtitle' },
      'role',
    );
    expect(moved).toEqual([{ entityType: 'person', field: 'jobTitle', property: 'role' }]);
    expect(
      setProperty(
        moved,
        { entityType: 'person', field: 'jobTitle', defaultProperty: 'jobtitle' },
        'jobtitle',
      ),
    ).toEqual([]);
  });
  it('always keeps a custom field, replacing its property', () => {
    const draft = [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }];
    expect(
      setProperty(draft, { entityType: 'person', field: 'leadScore', defaultProperty: null }, 'score'),
    ).toEqual([{ entityType: 'person', field: 'leadScore', property: 'score' }]);
    expect(removeMapping(draft, 'person.leadScore')).toEqual([]);
  });
});

describe('isDirty', () => {
  it('ignores order and sees a changed property', () => {
    const a = { entityType: 'person', field: 'a', property: 'x' };
    const b = { entityType: 'deal', field: 'b', property: 'y' };
    expect(isDirty([a, b], [b, a])).toBe(false);
    expect(isDirty([a], [a, b])).toBe(true);
    expect(isDirty([{ ...a, property: 'z' }], [a])).toBe(true);
  });
});

describe('rowsOf', () => {
  it('shows fields in force with the draft property, added custom fields last, and marks changes', () => {
    const saved = [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }];
    const fields: FieldState[] = [
      email,
      jobTitle,
      { field: 'leadScore', property: 'lead_score', custom: true, mapped: true, defaultProperty: null },
    ];
    const draft = [
      ...saved,
      { entityType: 'person', field: 'jobTitle', property: 'role' },
      { entityType: 'person', field: 'rating', property: 'stars' },
      { entityType: 'deal', field: 'other', property: 'p' },
    ];
    const rows = rowsOf('person', fields, draft, saved);
    expect(rows.map((r) => [r.field, r.property, r.changed, r.added])).toEqual([
      ['email', 'email', false, false],
      ['jobTitle', 'role', true, false],
      ['leadScore', 'lead_score', false, false],
      ['rating', 'stars', true, true],
    ]);
  });
  it('leaves out a saved custom field the draft removed, and says which field took a default property', () => {
    const fields: FieldState[] = [
      { field: 'leadScore', property: 'jobtitle', custom: true, mapped: true, defaultProperty: null },
      { ...jobTitle, mapped: false, takenBy: 'leadScore' },
    ];
    const saved = [{ entityType: 'person', field: 'leadScore', property: 'jobtitle' }];
    const rows = rowsOf('person', fields, [], saved);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ field: 'jobTitle', carried: false, takenBy: 'leadScore' });
  });
});

describe('problemsByRow', () => {
  const sent = [
    { entityType: 'person', field: 'leadScore', property: 'lead_scor' },
    { entityType: 'person', field: 'rating', property: 'jobtitle' },
    { entityType: 'person', field: 'jobTitle', property: 'jobtitle' },
  ];
  it('reads the mapping each problem starts with', () => {
    const problems = problemsByRow(
      'person.leadScore: portal 61234 has no contacts property lead_scor; person.rating and person.jobTitle all map to property jobtitle: a property carries one field',
      sent,
    );
    expect(problems.get('person.leadScore')).toBe('portal 61234 has no contacts property lead_scor');
    expect(problems.get('person.rating')).toContain('all map to property jobtitle');
    expect(problems.get('person.jobTitle')).toContain('all map to property jobtitle');
  });
  it('reads an index into what was sent for a problem of the request shape', () => {
    const problems = problemsByRow('invalid request: mappings.1.field: person.rating is mapped twice', sent);
    expect([...problems.keys()]).toEqual(['person.rating']);
    expect(problems.get('person.rating')).toBe('person.rating is mapped twice');
  });
  it('names no row when the message names none it was sent', () => {
    expect(problemsByRow('a google-calendar connection has fixed fields', sent).size).toBe(0);
    expect(problemsByRow('deal.amount: no such property', sent).size).toBe(0);
  });
});
