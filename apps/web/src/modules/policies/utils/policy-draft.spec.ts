import { describe, expect, it } from 'vitest';
import {
  bodyOf,
  changedFields,
  completeOrder,
  describeSet,
  fieldErrorsOf,
  fieldLabel,
  moveItem,
  policyOf,
} from './policy-draft';
import { rankableSources, sourceNamer } from './sources';

const A = '7d1c0b9e-3a43-4b9a-8f3f-0c6a2a1d1111';
const B = '7d1c0b9e-3a43-4b9a-8f3f-0c6a2a1d2222';

describe('moveItem', () => {
  it('moves one item up, down, and clamps at the ends', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, 1)).toEqual(['b', 'a', 'c']);
    expect(moveItem(['a', 'b', 'c'], 1, 9)).toEqual(['a', 'c', 'b']);
    expect(moveItem(['a', 'b', 'c'], 0, -1)).toEqual(['a', 'b', 'c']);
    expect(moveItem(['a', 'b'], 5, 0)).toEqual(['a', 'b']);
  });
});

describe('a draft of policies', () => {
  it('sends only what is not lww, and sees which fields changed', () => {
    const saved = { jobTitle: { kind: 'manual' as const }, phone: { kind: 'lww' as const } };
    const draft = {
      jobTitle: { kind: 'manual' as const },
      phone: { kind: 'priority' as const, order: [A, B] },
      email: { kind: 'lww' as const },
    };
    expect(bodyOf(draft)).toEqual({
      jobTitle: { kind: 'manual' },
      phone: { kind: 'priority', order: [A, B] },
    });
    expect(changedFields(draft, saved)).toEqual(['phone']);
    expect(changedFields({ ...draft, phone: { kind: 'priority', order: [B, A] } }, draft)).toEqual(['phone']);
    expect(changedFields(draft, draft)).toEqual([]);
  });

  it('starts a priority order from every source, and keeps an order already made', () => {
    expect(policyOf('priority', [A, B, 'user'])).toEqual({ kind: 'priority', order: [A, B, 'user'] });
    expect(policyOf('priority', [A, B], { kind: 'priority', order: [B] })).toEqual({
      kind: 'priority',
      order: [B],
    });
    expect(policyOf('manual', [A])).toEqual({ kind: 'manual' });
    expect(completeOrder([B], [A, B, 'user'])).toEqual([B, A, 'user']);
  });
});

describe('fieldErrorsOf', () => {
  it("marks the fields a 400's message names, the longest known name first", () => {
    const message =
      'invalid request: fields.jobTitle.kind: union merges lists and jobTitle holds no list; ' +
      'fields.lead.score.order.1: not a connection of this workspace; fields.gone: not a field of a person';
    expect(fieldErrorsOf(message, ['jobTitle', 'lead', 'lead.score'])).toEqual({
      jobTitle: 'union merges lists and jobTitle holds no list',
      'lead.score': 'not a connection of this workspace',
    });
    expect(fieldErrorsOf('invalid request: body: Required', ['jobTitle'])).toEqual({});
  });
});

describe('names', () => {
  const connections = [
    { id: A, provider: 'hubspot', externalAccountId: '3301', displayName: 'CRM A', status: 'live' },
    {
      id: B.toUpperCase(),
      provider: 'gmail',
      externalAccountId: 'ana@acme.example',
      displayName: null,
      status: 'live',
    },
    {
      id: 'c0ffee00-0000-4000-8000-000000000000',
      provider: 'hubspot',
      externalAccountId: '9',
      displayName: null,
      status: 'disconnected',
    },
  ];

  it('names sources as the app does, and ranks the live ones then people', () => {
    const name = sourceNamer(connections);
    expect([name(A), name(B), name('user'), name('deadbeef-0000-4000-8000-000000000000')]).toEqual([
      'CRM A',
      'Gmail ana@acme.example',
      'People editing in Syncline',
      'Removed connection deadbeef',
    ]);
    expect(rankableSources(connections)).toEqual([A, B, 'user']);
    expect(
      describeSet(
        'person',
        { jobTitle: { kind: 'manual' }, phone: { kind: 'priority', order: [B, A] } },
        name,
      ),
    ).toBe('Job title: A person decides; Phone: Source priority (Gmail ana@acme.example › CRM A)');
    expect(describeSet('person', {}, name)).toBe('Every field: latest edit wins');
  });

  it('labels fields the record pages know, and words the others', () => {
    expect(fieldLabel('person', 'jobTitle')).toBe('Job title');
    expect(fieldLabel('meeting', 'startTime')).toBe('Start time');
    expect(fieldLabel('email_activity', 'labelIds')).toBe('Label ids');
  });
});
