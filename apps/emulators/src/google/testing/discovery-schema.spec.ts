import { describe, expect, it } from 'vitest';
import { type DiscoveryDocument, DiscoveryValidator, toJsonSchema } from './discovery-schema';

const doc: DiscoveryDocument = {
  name: 'calendar',
  version: 'v3',
  schemas: {
    Events: {
      id: 'Events',
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: 'Event' } },
        nextSyncToken: { type: 'string' },
      },
    },
    Event: {
      id: 'Event',
      type: 'object',
      properties: {
        id: { type: 'string' },
        updated: { type: 'string', format: 'date-time' },
        sequence: { type: 'integer', format: 'int32' },
        expiration: { type: 'string', format: 'int64' },
        status: { type: 'string', enum: ['confirmed', 'cancelled'] },
        extendedProperties: {
          type: 'object',
          properties: { private: { type: 'object', additionalProperties: { type: 'string' } } },
        },
        anything: { type: 'any' },
      },
    },
  },
};

describe('toJsonSchema', () => {
  it('keeps refs, closes objects with declared properties, and maps formats', () => {
    expect(toJsonSchema(doc.schemas.Event!)).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: {
        updated: { type: 'string', format: 'date-time' },
        expiration: { type: 'string', pattern: '^-?[0-9]+$' },
        sequence: { type: 'integer', minimum: -(2 ** 31) },
        extendedProperties: { properties: { private: { additionalProperties: { type: 'string' } } } },
        anything: {},
      },
    });
    expect(toJsonSchema({ type: 'array', items: { $ref: 'Event' } })).toEqual({
      type: 'array',
      items: { $ref: 'Event' },
    });
    expect(toJsonSchema(doc.schemas.Event!, false)).not.toHaveProperty('additionalProperties');
  });
});

describe('DiscoveryValidator', () => {
  const validator = new DiscoveryValidator({ calendar: doc });
  const valid = {
    items: [
      {
        id: 'a',
        updated: '2030-01-01T10:00:00.000Z',
        sequence: 0,
        expiration: '1893456000000',
        status: 'confirmed',
        extendedProperties: { private: { k: 'v' } },
        anything: [1, 'x'],
      },
    ],
    nextSyncToken: 't',
  };

  it('accepts a valid document through $refs', () => {
    expect(validator.errors('calendar', 'Events', valid)).toEqual([]);
  });

  it.each([
    ['an unknown field', { id: 'a', eventType: 'default' }],
    ['an int64 sent as a number', { expiration: 1893456000000 }],
    ['a timestamp without a zone', { updated: '2030-01-01T10:00:00' }],
    ['a value outside the enum', { status: 'deleted' }],
    ['a non-string map value', { extendedProperties: { private: { k: 1 } } }],
  ])('rejects %s', (_name, event) => {
    expect(validator.errors('calendar', 'Events', { items: [event] })).not.toEqual([]);
  });

  it('names an unknown schema', () => {
    expect(() => validator.errors('calendar', 'Nope', {})).toThrow(/no schema Nope/);
  });
});
