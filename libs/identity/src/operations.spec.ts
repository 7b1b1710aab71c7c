import { randomUUID } from 'node:crypto';
import { sourceChangeSchema } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { identityOperationChange, identityOperationOf, type MergeIntent } from './operations';
import { entityIdFor, uuidV5 } from './stable-id';

describe('identity operations on the log', () => {
  const merge: MergeIntent = {
    kind: 'merge',
    operationId: randomUUID(),
    workspaceId: randomUUID(),
    entityType: 'person',
    survivorId: randomUUID(),
    absorbedId: randomUUID(),
  };

  it('are valid source changes with a stable event key, and read back as the same intent', () => {
    const change = sourceChangeSchema.parse(identityOperationChange(merge, randomUUID()));
    expect(change).toMatchObject({ op: 'merge', eventKey: `identity-operation:${merge.operationId}` });
    expect(identityOperationOf(change.op, change.fields)).toEqual(merge);
  });

  it('ignores ordinary changes and refuses malformed operations', () => {
    expect(identityOperationOf('upsert', { email: 'a@b.co' })).toBeUndefined();
    expect(identityOperationOf('merge', { mergedInto: '1' })).toBeUndefined();
    expect(() => identityOperationOf('merge', { identityOperation: { kind: 'merge' } })).toThrow(/malformed/);
  });

  it('derives entity ids from the source record, so a replay makes the same ids', () => {
    expect(uuidV5('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(entityIdFor('w', 'c', 'person', '1')).toBe(entityIdFor('w', 'c', 'person', '1'));
    expect(entityIdFor('w', 'c', 'person', '1')).not.toBe(entityIdFor('w', 'c', 'person', '2'));
  });
});
