import { describe, expect, it } from 'vitest';
import { OBJECT_SPECS, specOfEntity, specsFor, toHubspot, toUnified } from './hubspot.mapper';

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

const raw0 = {
  id: '2',
  properties: {},
  createdAt: '2026-11-01T00:00:00Z',
  updatedAt: '2026-11-01T00:00:00Z',
};
