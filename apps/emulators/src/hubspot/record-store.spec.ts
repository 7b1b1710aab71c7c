import { describe, expect, it } from 'vitest';
import { OBJECT_TYPES } from './object-types';
import { Prng } from './prng';
import { RecordStore, type WriteSource } from './record-store';

const app: WriteSource = { sourceType: 'INTEGRATION', sourceId: '5001' };
const ui: WriteSource = { sourceType: 'CRM_UI', sourceId: 'userId:42', updatedByUserId: 42 };

function created(store: RecordStore, properties: Record<string, string>, at = 1000) {
  const result = store.create(properties, app, at);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value.record;
}

describe('RecordStore', () => {
  it('keeps every write in the history, newest first, with its source', () => {
    const store = new RecordStore(OBJECT_TYPES.contacts, [], new Prng(1));
    const record = created(store, { email: 'Ada@Example.com', firstname: 'Ada' });
    const update = store.update(record.id, { firstname: 'Augusta', email: 'ada@example.com' }, ui, 2000);
    expect(update.ok && update.value.changes).toEqual([{ name: 'firstname', value: 'Augusta' }]);
    expect(record.properties.get('email')).toBe('ada@example.com');
    expect(record.history.get('firstname')).toEqual([
      { value: 'Augusta', timestamp: 2000, sourceType: 'CRM_UI', sourceId: 'userId:42', updatedByUserId: 42 },
      { value: 'Ada', timestamp: 1000, sourceType: 'INTEGRATION', sourceId: '5001' },
    ]);
    expect(record.properties.get('lastmodifieddate')).toBe(new Date(2000).toISOString());
    expect(record.properties.get('hs_object_id')).toBe(record.id);
  });

  it('does not touch the record when nothing changed', () => {
    const store = new RecordStore(OBJECT_TYPES.companies, [], new Prng(1));
    const record = created(store, { name: 'Acme' });
    const update = store.update(record.id, { name: 'Acme' }, app, 5000);
    expect(update.ok && update.value.changes).toEqual([]);
    expect(record.updatedAt).toBe(1000);
    expect(record.properties.has('hs_lastmodifieddate')).toBe(true);
  });

  it('refuses a duplicate unique value, case-insensitively for email', () => {
    const store = new RecordStore(OBJECT_TYPES.contacts, ['syncline_id'], new Prng(1));
    const first = created(store, { email: 'a@x.test', syncline_id: 'p-1' });
    expect(store.create({ email: 'A@X.TEST' }, app, 1)).toEqual({
      ok: false,
      error: { code: 'CONFLICT', property: 'email', value: 'a@x.test', existingId: first.id },
    });
    expect(store.create({ syncline_id: 'p-1' }, app, 1)).toMatchObject({
      ok: false,
      error: { property: 'syncline_id' },
    });
    expect(store.findBy('syncline_id', 'p-1')?.id).toBe(first.id);
    store.archive(first.id, 2);
    expect(store.create({ email: 'a@x.test' }, app, 3).ok).toBe(true);
  });

  it('hands out increasing ids, the same ones under the same seed', () => {
    const ids = (seed: number) => {
      const store = new RecordStore(OBJECT_TYPES.deals, [], new Prng(seed));
      return [1, 2, 3].map(() => created(store, {}).id);
    };
    expect(ids(9)).toEqual(ids(9));
    const [a, b, c] = ids(9).map(Number);
    expect(a! < b! && b! < c!).toBe(true);
  });

  it('merges: the primary keeps its values, gains the others, and the merged id answers as it', () => {
    const store = new RecordStore(OBJECT_TYPES.contacts, [], new Prng(1));
    const primary = created(store, { email: 'p@x.test', firstname: 'Primary' });
    const other = created(store, { email: 'o@x.test', firstname: 'Other', phone: '123' });
    const merge = store.merge(primary.id, other.id, app, 3000);
    expect(merge.ok && merge.value.numberOfPropertiesMoved).toBe(1);
    expect(primary.properties.get('firstname')).toBe('Primary');
    expect(primary.properties.get('phone')).toBe('123');
    expect(primary.properties.get('hs_merged_object_ids')).toBe(other.id);
    expect(primary.properties.get('hs_additional_emails')).toBe('o@x.test');
    expect(store.get(other.id)?.id).toBe(primary.id);
    expect(store.findBy('email', 'o@x.test')?.id).toBe(primary.id);
    expect(store.merge(primary.id, other.id, app, 4000)).toMatchObject({
      ok: false,
      error: { code: 'INVALID' },
    });
  });
});
