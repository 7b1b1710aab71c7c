import { describe, expect, it } from 'vitest';
import { graphSchema } from './graph-schema';

describe('graphSchema', () => {
  it('accepts a delta page with a removed entry and refuses wrong enums, misspelt fields and bad timestamps', () => {
    const schema = graphSchema();
    expect(
      schema.errors('eventCollectionResponse', {
        '@odata.deltaLink': 'https://localhost:1/v1.0/me/calendarView/delta?$deltatoken=x',
        value: [{ '@odata.type': '#microsoft.graph.event', id: 'AAMk', '@removed': { reason: 'deleted' } }],
      }),
    ).toEqual([]);
    // A nullable enum fails on both branches of its anyOf: every message names the path.
    expect(schema.errors('event', { showAs: 'maybe' })).toContainEqual(
      expect.stringContaining('event/showAs must be equal to one of the allowed values'),
    );
    expect(
      schema.errors('event', { start: { dateTime: '2030-01-01T00:00:00.0000000', timezone: 'UTC' } }),
    ).toContainEqual(expect.stringContaining('event/start must NOT have additional properties'));
    expect(schema.errors('event', { createdDateTime: 'yesterday' })).toEqual([
      expect.stringContaining('event/createdDateTime must match format "date-time"'),
    ]);
    expect(schema.errors('odataError', { error: { message: 'no code' } })).toEqual([
      expect.stringContaining("must have required property 'code'"),
    ]);
    expect(() => schema.errors('nonsense', {})).toThrow('the Graph schema has no type nonsense');
  });
});
