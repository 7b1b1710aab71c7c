import { inTransaction } from '@syncline/core';
import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import type { OutboxRow } from './outbox/outbox-row';
import {
  claimPush,
  contactEvent,
  logEventOf,
  receiptOf,
  seedConnections,
  syncStage,
} from './testing/sync-stage';
import { foldWriteEvents } from './write-events';

let db: TestDatabase;
let pool: Pool;
/** The stage's own connections give up on a lock after 2 s: a wait fails the test instead of passing late. */
let stagePool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('row_locks');
  pool = new Pool({ connectionString: db.url, max: 2 });
  stagePool = new Pool({ connectionString: db.url, max: 2, options: '-c lock_timeout=2000' });
});

afterAll(async () => {
  await stagePool?.end();
  await pool?.end();
  await db?.drop();
});

/** Holds the lock a pusher holds while it marks a row sent, until `release` is called. */
async function lockRow(id: string): Promise<{ release: () => Promise<void>; client: PoolClient }> {
  const client = await pool.connect();
  await client.query('BEGIN');
  await client.query('SELECT 1 FROM outbox WHERE id = $1 FOR UPDATE', [id]);
  return {
    client,
    release: async () => {
      await client.query('ROLLBACK');
      client.release();
    },
  };
}

/** Ada in A and B, an edit in A owed to B, and B's row taken by a pusher (`sending`). */
async function rowBeingSent() {
  const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
  const { handle } = syncStage(stagePool);
  const t0 = Date.now() - 60_000;
  const at = (s: number) => new Date(t0 + s * 1000);
  const ada = { email: 'ada@analytical.example', firstName: 'Ada', jobTitle: null };
  await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), ada));
  await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), ada));
  await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ada, jobTitle: 'Analyst' }));
  expect(await claimPush(pool, ws.b, at(11))).toBe(1);
  const { rows } = await pool.query<
    { id: string } & Pick<
      OutboxRow,
      'workspace_id' | 'entity_id' | 'fields' | 'prior' | 'heads' | 'idempotency_key'
    >
  >(
    `SELECT id::text AS id, idempotency_key, workspace_id, entity_id, fields, prior, heads
       FROM outbox WHERE connection_id = $1 AND status = 'sending'`,
    [ws.b],
  );
  return { ws, handle, at, ada, row: rows[0]! };
}

const statusOf = async (id: string) =>
  (await pool.query<{ status: string }>('SELECT status FROM outbox WHERE id = $1', [id])).rows[0]?.status;

// A pusher marking its rows sent waits for any batch holding one of them, and holds the rows it
// marked meanwhile: a batch that then comes to one of those deadlocks with it. The stage never
// takes the lock of a row a pusher has.
describe('the sync stage and the rows a pusher holds', () => {
  it('owes a write again without waiting for the row a pusher is sending under its key', async () => {
    const { ws, handle, at, ada, row } = await rowBeingSent();
    const held = await lockRow(row.id);
    try {
      // A's report again, unchanged: B is still owed the same write at the same heads.
      const owed = await handle(
        contactEvent(ws.workspaceId, ws.a, 'a-1', at(12), { ...ada, jobTitle: 'Analyst' }),
      );
      expect(owed.push).toContain(ws.b);
    } finally {
      await held.release();
    }
    // The pusher's row is left as it was: one row under the key, still the pusher's.
    const { rows } = await pool.query<{ status: string }>(
      'SELECT status FROM outbox WHERE connection_id = $1 AND idempotency_key = $2',
      [ws.b, row.idempotency_key],
    );
    expect(rows).toEqual([{ status: 'sending' }]);
  });

  it('folds a receipt without waiting for its row, which the pusher is marking sent; marks it when free', async () => {
    const { ws, row } = await rowBeingSent();
    const receipt = receiptOf(
      row,
      { connectionId: ws.b, entityType: 'person', externalId: 'b-1' },
      new Date(),
    );
    const event = logEventOf(receipt, { offset: 1 });
    const held = await lockRow(row.id);
    try {
      await inTransaction(stagePool, (tx) => foldWriteEvents(tx, [event]));
      expect(await statusOf(row.id)).toBe('sending');
    } finally {
      await held.release();
    }
    // The receipt is folded all the same; and folded again with the row free, the row is marked.
    const { rows } = await pool.query(
      'SELECT 1 FROM write_receipt WHERE connection_id = $1 AND idempotency_key = $2',
      [ws.b, row.idempotency_key],
    );
    expect(rows).toHaveLength(1);
    await inTransaction(stagePool, (tx) => foldWriteEvents(tx, [event]));
    expect(await statusOf(row.id)).toBe('sent');
  });
});
