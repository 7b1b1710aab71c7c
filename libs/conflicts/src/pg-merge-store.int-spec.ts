import { randomUUID } from 'node:crypto';
import { inTransaction } from '@syncline/core';
import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { mergeStoreAcceptance } from '../test/merge-store.acceptance';
import { PgMergeStore } from './pg-merge-store';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('conflicts_store');
  pool = new Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Each case runs inside one transaction, as a log consumer's handler does, and commits. */
const freshTransaction = (body: (client: PoolClient) => Promise<void>): Promise<void> =>
  inTransaction(pool, async (client) => {
    await client.query(
      'TRUNCATE entity_doc, entity_doc_change, entity_synced_heads, merge_conflict, policy_in_force',
    );
    await body(client);
  });

describe('PgMergeStore', () => {
  mergeStoreAcceptance((body) => freshTransaction((client) => body(new PgMergeStore(client))));
});

describe('PgMergeStore with deferred writes', () => {
  // The same contract, flushed once before the commit as the sync stage does.
  mergeStoreAcceptance((body) =>
    freshTransaction(async (client) => {
      const store = new PgMergeStore(client, { deferWrites: true });
      await body(store);
      await store.flush();
    }),
  );

  it('holds changes and synced heads back until flushed, and a load of their entity flushes first', async () => {
    await freshTransaction(async (client) => {
      const store = new PgMergeStore(client, { deferWrites: true });
      const [entity, other, workspace, connection] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const count = async (table: string) =>
        Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
      await store.appendChange(entity, workspace, 1, Uint8Array.of(1, 2, 3));
      await store.appendChange(entity, workspace, 2, Uint8Array.of(4));
      await store.saveSynced(entity, connection, { heads: ['h1'], stale: {} });
      await store.saveSynced(entity, connection, { heads: ['h2'], stale: { stage: '"Lost"' } });
      await store.appendChange(other, workspace, 1, Uint8Array.of(9));
      expect([
        await count('entity_doc'),
        await count('entity_doc_change'),
        await count('entity_synced_heads'),
      ]).toEqual([0, 0, 0]);

      const loaded = await store.load(entity);
      expect(loaded?.chunks).toEqual([Uint8Array.of(1, 2, 3), Uint8Array.of(4)]);
      expect(loaded?.lastSeq).toBe(2);
      // The last state of a pair is the one stored.
      expect(loaded?.synced.get(connection)).toEqual({ heads: ['h2'], stale: { stage: '"Lost"' } });
      expect([
        await count('entity_doc'),
        await count('entity_doc_change'),
        await count('entity_synced_heads'),
      ]).toEqual([2, 3, 1]);

      // Flushed, nothing is held; a flush with nothing held writes nothing.
      await store.appendChange(other, workspace, 2, Uint8Array.of(10));
      await store.flush();
      await store.flush();
      expect(await count('entity_doc_change')).toBe(4);
      // A second writer of a seq still fails loudly, at the flush.
      await store.appendChange(other, workspace, 2, Uint8Array.of(11));
      await expect(store.flush()).rejects.toThrow(/duplicate key/);
      await client.query('ROLLBACK');
      await client.query('BEGIN');
    });
  });

  it('holds conflicts back until flushed, a read or resolution of conflicts flushing first; the first of a repeated id stands', async () => {
    await freshTransaction(async (client) => {
      const store = new PgMergeStore(client, { deferWrites: true });
      const [entity, workspace] = [randomUUID(), randomUUID()];
      const conflict = (id: string, status: 'open' | 'resolved') => ({
        id,
        workspaceId: workspace,
        entityId: entity,
        field: 'jobTitle',
        kind: 'concurrent' as const,
        policy: 'manual' as const,
        candidates: [
          { value: 'CTO', source: { kind: 'connection' as const, id: 'a' }, eventTime: new Date(1_000) },
          { value: 'CEO', source: { kind: 'connection' as const, id: 'b' }, eventTime: new Date(2_000) },
        ],
        status,
        detectedAt: new Date(3_000),
      });
      const [first, second] = [randomUUID(), randomUUID()];
      await store.recordConflicts([conflict(first, 'open')]);
      await store.recordConflicts([conflict(first, 'resolved'), conflict(second, 'open')]);
      const stored = async () =>
        (
          await client.query<{ id: string; status: string }>(
            'SELECT id::text, status::text FROM merge_conflict ORDER BY id',
          )
        ).rows;
      expect(await stored()).toEqual([]);
      expect((await store.listConflicts(entity)).map((c) => [c.id, c.status]).sort()).toEqual(
        [
          [first, 'open'],
          [second, 'open'],
        ].sort(),
      );
      await store.recordConflicts([conflict(randomUUID(), 'open')]);
      await store.resolveConflict(first, { value: 'CTO', userId: 'u1', at: new Date(4_000) });
      expect((await stored()).length).toBe(3);
    });
  });

  it('loads several documents in one go, as load reads each, flushing what it holds of them first', async () => {
    await freshTransaction(async (client) => {
      const store = new PgMergeStore(client, { deferWrites: true });
      const [a, b, missing, workspace, connection] = [
        randomUUID(),
        randomUUID(),
        randomUUID(),
        randomUUID(),
        randomUUID(),
      ];
      await store.appendChange(a, workspace, 1, Uint8Array.of(1));
      await store.appendChange(a, workspace, 2, Uint8Array.of(2, 3));
      await store.saveSynced(a, connection, { heads: ['h1'], stale: {} });
      await store.appendChange(b, workspace, 1, Uint8Array.of(7));
      await store.compact(b, workspace, Uint8Array.of(8, 9), 1);
      await store.appendChange(b, workspace, 2, Uint8Array.of(10));
      const many = await store.loadMany([a, b, missing, a]);
      expect([...many.keys()].sort()).toEqual([a, b].sort());
      expect(many.get(a)).toEqual(await store.load(a));
      expect(many.get(b)).toEqual(await store.load(b));
      expect(many.get(b)?.snapshot).toEqual(Uint8Array.of(8, 9));
      expect(many.get(a)?.synced.get(connection)).toEqual({ heads: ['h1'], stale: {} });
    });
  });
});
