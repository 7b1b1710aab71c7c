import { describe, expect, it } from 'vitest';
import { coalesce } from './coalesce';
import type { ClaimedOutboxRow } from './outbox-row';

const row = (id: number, patch: Partial<ClaimedOutboxRow>): ClaimedOutboxRow => ({
  id: String(id),
  workspace_id: 'w',
  entity_id: 'e1',
  entity_type: 'person',
  op: 'update',
  external_id: '42',
  fields: {},
  prior: {},
  heads: [`h${id}`],
  idempotency_key: `k${id}`,
  ...patch,
});

describe('coalesce', () => {
  it('folds rows of one record into one write, later values winning field by field', () => {
    const linked = new Map([['e1', '42']]);
    const { writes, dropped } = coalesce(
      [
        row(1, { fields: { stage: 'Proposal', owner: 'Ravi' } }),
        row(2, { fields: { stage: 'Won' } }),
        row(3, { entity_id: 'e2', fields: { name: 'x' }, external_id: '7' }),
      ],
      new Map([...linked, ['e2', '7']]),
    );
    expect(dropped).toEqual([]);
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatchObject({
      entityId: 'e1',
      op: 'update',
      externalId: '42',
      fields: { stage: 'Won', owner: 'Ravi' },
      heads: ['h2'],
      idempotencyKey: 'k2',
      rowIds: ['1', '2'],
    });
  });

  it('turns a create into an update once the record is linked, and keeps one key per create', () => {
    const rows = [
      row(1, {
        op: 'create',
        external_id: null,
        fields: { email: 'a@x.io' },
        idempotency_key: 'e1.c.create',
      }),
      row(2, {
        op: 'create',
        external_id: null,
        fields: { email: 'a@x.io', phone: '1' },
        idempotency_key: 'e1.c.create',
      }),
    ];
    const unlinked = coalesce(rows, new Map());
    expect(unlinked.writes[0]).toMatchObject({
      op: 'create',
      idempotencyKey: 'e1.c.create',
      externalId: null,
    });
    const linked = coalesce(rows, new Map([['e1', '99']]));
    expect(linked.writes[0]).toMatchObject({ op: 'update', externalId: '99', fields: { phone: '1' } });
    expect(linked.writes[0]!.idempotencyKey).not.toBe('e1.c.create');
  });

  it('drops an update of a record that is no longer linked, and lets a delete win', () => {
    expect(coalesce([row(1, { fields: { a: 1 } })], new Map()).dropped).toEqual(['1']);
    const { writes } = coalesce(
      [row(1, { fields: { a: 1 } }), row(2, { op: 'delete' })],
      new Map([['e1', '42']]),
    );
    expect(writes).toEqual([expect.objectContaining({ op: 'delete', externalId: '42', rowIds: ['1', '2'] })]);
  });

  it('sends a provider merge as it was queued, before and apart from the writes of its records', () => {
    const { writes, dropped } = coalesce(
      [
        row(1, { entity_id: 'gone', op: 'merge', external_id: '42', fields: { mergedExternalId: '43' } }),
        row(2, { entity_id: 'e1', fields: { phone: '1' } }),
        row(3, {
          entity_id: 'restored',
          op: 'create',
          external_id: null,
          fields: { email: 'x@y' },
          after_provider_merge: true,
        }),
      ],
      // The absorbed entity's one link there is the record being merged away.
      new Map([
        ['gone', '43'],
        ['e1', '42'],
      ]),
    );
    expect(dropped).toEqual([]);
    expect(writes.map((w) => [w.op, w.entityId, w.externalId, w.mergedExternalId])).toEqual([
      ['merge', 'gone', '42', '43'],
      ['update', 'e1', '42', undefined],
      ['create', 'restored', null, undefined],
    ]);
    expect(writes[0]).toMatchObject({ fields: {}, idempotencyKey: 'k1', rowIds: ['1'] });
    expect(writes[2]?.afterProviderMerge).toBe(true);
  });
});
