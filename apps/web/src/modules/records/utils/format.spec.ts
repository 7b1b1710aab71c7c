import { describe, expect, it } from 'vitest';
import { fieldSpec } from '../../../lib/fields';
import { evidenceWords, fromInputText, linkedBecauseWords, providerFamily, toInputText } from './format';

describe('record page wording', () => {
  it('says why a system record is linked', () => {
    expect(linkedBecauseWords({ rule: 'shared-key', evidence: ['email:ana@acme.com'], score: 1 })).toBe(
      'Linked because they share the email ana@acme.com.',
    );
    expect(linkedBecauseWords({ rule: 'created', evidence: [], score: 1 })).toBe(
      'Linked because it began this record (no existing record matched).',
    );
    expect(linkedBecauseWords(null)).toBe('Linked before reasons were kept.');
    expect(
      linkedBecauseWords({
        rule: 'created',
        evidence: [],
        score: 1,
        joinedBy: [{ operationId: 'op', rule: 'person-merge', evidence: ['by:key1'], score: 1 }],
      }),
    ).toBe(
      'Linked because it began this record (no existing record matched). Then moved here by a merge: a person merged it in Syncline (by key1).',
    );
    expect(evidenceWords('domain:acme.com')).toBe('the domain acme.com');
    expect(evidenceWords('odd')).toBe('odd');
  });

  it('names the system a link opens', () => {
    expect(providerFamily('hubspot')).toBe('HubSpot');
    expect(providerFamily('google-calendar')).toBe('Google');
    expect(providerFamily('gmail')).toBe('Google');
  });

  it('turns input text into the value sent, and back', () => {
    expect(fromInputText(fieldSpec('person', 'jobTitle'), '  ')).toBeNull();
    expect(fromInputText(fieldSpec('person', 'jobTitle'), 'CTO')).toBe('CTO');
    expect(fromInputText(fieldSpec('deal', 'amount'), '12,500.5')).toBe(12500.5);
    // Not a number: sent as typed, for the API to refuse naming the field.
    expect(fromInputText(fieldSpec('deal', 'amount'), 'lots')).toBe('lots');
    const close = fromInputText(fieldSpec('deal', 'closeDate'), '2026-12-01T10:30');
    expect(typeof close === 'string' && close.endsWith('Z')).toBe(true);
    expect(toInputText(fieldSpec('deal', 'closeDate'), close)).toBe('2026-12-01T10:30');
    expect(toInputText(fieldSpec('deal', 'amount'), 42)).toBe('42');
    expect(toInputText(fieldSpec('person', 'email'), null)).toBe('');
  });
});
