import { describe, expect, it } from 'vitest';
import {
  OBJECT_SPECS,
  requestedProperties,
  specOfEntity,
  specsFor,
  toHubspot,
  toUnified,
} from './hubspot.mapper';
import { INSIGHT_PROPERTIES } from './hubspot-insight-properties';
import { checkHubspotFieldMappings } from './hubspot-properties';

describe('HubSpot field mappings per connection', () => {
  const mappings = {
    'person.leadScore': 'lead_score',
    'person.phone': 'mobilephone',
    'deal.amount': 'amount_eur',
  };
  const specs = specsFor(mappings);
  const person = specOfEntity('person', specs)!;

  it('adds custom properties as text and moves default fields, keeping their kind', () => {
    expect(person.fields.leadScore).toEqual(['lead_score', 'string']);
    expect(person.fields.phone).toEqual(['mobilephone', 'string']);
    expect(specOfEntity('deal', specs)!.fields.amount).toEqual([
      'amount_eur',
      specOfEntity('deal')!.fields.amount![1],
    ]);
    // Other object types and the defaults themselves are untouched.
    expect(specOfEntity('company', specs)).toBe(specOfEntity('company'));
    expect(specOfEntity('person')!.fields.phone![0]).toBe('phone');
  });

  it('maps both ways with the connection spec', () => {
    const raw = {
      id: '1',
      properties: { email: 'a@b.c', lead_score: '7', mobilephone: '+1 555', phone: 'ignored' },
      createdAt: '2026-11-01T00:00:00Z',
      updatedAt: '2026-11-01T00:00:00Z',
    };
    expect(toUnified(person, raw).fields).toMatchObject({ email: 'a@b.c', leadScore: '7', phone: '+1 555' });
    expect(toHubspot(person, { leadScore: 9, phone: '+1 777' })).toEqual({
      lead_score: '9',
      mobilephone: '+1 777',
    });
  });

  it('gives a property to one field only, and returns the defaults when there are no mappings', () => {
    const moved = specOfEntity('person', specsFor({ 'person.workPhone': 'phone' }))!;
    expect(moved.fields.workPhone).toEqual(['phone', 'string']);
    expect(moved.fields).not.toHaveProperty('phone');
    expect(specsFor(undefined)).toBe(OBJECT_SPECS);
    expect(specsFor({})).toBe(OBJECT_SPECS);
    expect(specsFor(mappings)).toBe(specs);
  });

  it('keeps value conversions on a moved field, and a property taken from status and progress drops both', () => {
    const task = specOfEntity(
      'task',
      specsFor({ 'task.priority': 'urgency', 'task.stage': 'hs_task_status' }),
    )!;
    expect(toHubspot(task, { priority: 'high' })).toEqual({ urgency: 'HIGH' });
    expect(task.fields).not.toHaveProperty('status');
    expect(task.fields).not.toHaveProperty('progress');
    expect(
      toUnified(task, { ...raw0, properties: { urgency: 'LOW', hs_task_status: 'WAITING' } }).fields,
    ).toMatchObject({ priority: 'low', stage: 'WAITING' });
  });
});

describe("Syncline's own properties and field mappings", () => {
  it('refuses a mapping onto a syncline_ property as Validation, naming it', () => {
    expect(checkHubspotFieldMappings(mappings0).ok).toBe(true);
    const refused = checkHubspotFieldMappings({
      ...mappings0,
      'person.lastContacted': 'syncline_last_contacted',
      'deal.trend': 'syncline_engagement_trend',
    });
    if (refused.ok) throw new Error('expected a refusal');
    expect(refused.error.code).toBe('Validation');
    expect(refused.error.message).toContain('person.lastContacted: syncline_last_contacted');
    expect(refused.error.message).toContain('deal.trend: syncline_engagement_trend');
    expect(refused.error.message).not.toContain('lead_score');
    expect(checkHubspotFieldMappings({ 'company.origin': 'syncline_id' }).ok).toBe(false);
  });

  it('never reads an insight property: not requested by default, and a stored mapping onto one is ignored', () => {
    const names = INSIGHT_PROPERTIES.map((p) => p.name);
    expect(names).toHaveLength(9);
    for (const spec of OBJECT_SPECS)
      expect(requestedProperties(spec).filter((p) => names.includes(p))).toEqual([]);
    const specs = specsFor({ ...mappings0, 'person.lastContacted': 'syncline_last_contacted' });
    const person = specOfEntity('person', specs)!;
    expect(person.fields).not.toHaveProperty('lastContacted');
    expect(person.fields.leadScore).toEqual(['lead_score', 'string']);
    expect(requestedProperties(person)).not.toContain('syncline_last_contacted');
  });
});

const mappings0 = { 'person.leadScore': 'lead_score' };

const raw0 = {
  id: '2',
  properties: {},
  createdAt: '2026-11-01T00:00:00Z',
  updatedAt: '2026-11-01T00:00:00Z',
};
