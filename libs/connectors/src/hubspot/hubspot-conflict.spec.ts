import { describe, expect, it } from 'vitest';
import { existingIdOf } from './hubspot-conflict';

describe('existingIdOf', () => {
  it('reads the id HubSpot names in its "already exists" messages', () => {
    expect(existingIdOf({ message: 'Contact already exists. Existing ID: 12345' })).toBe('12345');
    expect(
      existingIdOf({
        message:
          'A company with the unique value "acme.com" for property "domain" already exists. Existing ID: 8801',
      }),
    ).toBe('8801');
    // As a batch error repeats it behind our prefix, and with the punctuation and case varied.
    expect(existingIdOf({ message: 'HubSpot batch: Contact already exists. Existing ID: 77.' })).toBe('77');
    expect(existingIdOf({ message: 'contact already exists, existing id "903"' })).toBe('903');
    expect(existingIdOf({ message: 'Object already exists. Existing object ID=4' })).toBe('4');
  });

  it('falls back to context.existingId (the emulator, batch errors) when the message names none', () => {
    expect(existingIdOf({ message: 'Conflict', context: { existingId: ['5150'] } })).toBe('5150');
    expect(existingIdOf({ context: { existingId: '42', property: ['email'] } })).toBe('42');
    expect(existingIdOf({ context: { existingId: [42] } })).toBe('42');
  });

  it('names no record when there is none, or more than one, to pin the refusal on', () => {
    expect(existingIdOf({ message: 'Contact already exists.' })).toBeUndefined();
    expect(existingIdOf({ message: 'Existing ID: abc' })).toBeUndefined();
    // Not an id of its own: a longer number, or a word that only starts like one.
    expect(existingIdOf({ message: 'Existing ID: 12ab' })).toBeUndefined();
    expect(existingIdOf({ message: 'Existing IDs: 1, 2' })).toBeUndefined();
    expect(existingIdOf({ message: 'Existing ID: 1. Existing ID: 2' })).toBeUndefined();
    expect(existingIdOf({ message: 'Existing ID: 1. Existing ID: 1' })).toBe('1');
    expect(existingIdOf({ context: { existingId: ['1', '2'] } })).toBeUndefined();
    expect(existingIdOf({ context: { existingId: ['x-1'] } })).toBeUndefined();
    expect(existingIdOf({ message: 42, context: null })).toBeUndefined();
    expect(existingIdOf({})).toBeUndefined();
  });
});
