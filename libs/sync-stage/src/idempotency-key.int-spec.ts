import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { createKey, createKeySql, foldedKeySql } from './idempotency-key';
import { receiptEventKey, receiptEventKeySql } from './write-events';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('idempotency_key');
  pool = new Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

// The SQL builders meet keys the TypeScript ones wrote: the two must spell them alike.
describe('idempotency keys in SQL', () => {
  it('spells a create key as createKey does, from uuid columns and parameters', async () => {
    const entityId = randomUUID();
    const connectionId = randomUUID();
    const { rows } = await pool.query<{ key: string }>(
      `SELECT ${createKeySql('t.e', '$2::uuid')} AS key FROM (SELECT $1::uuid AS e) t`,
      [entityId, connectionId],
    );
    expect(rows[0]?.key).toBe(createKey(entityId, connectionId));
  });

  it('sets a folded create aside under its key and the operation', async () => {
    const { rows } = await pool.query<{ key: string }>(`SELECT ${foldedKeySql('$1::text', '$2')} AS key`, [
      'e.c.create',
      'op-1',
    ]);
    expect(rows[0]?.key).toBe('e.c.create.folded:op-1');
  });

  it('spells a receipt’s event key as receiptEventKey does, from a uuid column and a key', async () => {
    const connectionId = randomUUID();
    const { rows } = await pool.query<{ key: string }>(
      `SELECT ${receiptEventKeySql('t.c', 't.k')} AS key FROM (SELECT $1::uuid AS c, $2::text AS k) t`,
      [connectionId, 'e.c.create'],
    );
    expect(rows[0]?.key).toBe(receiptEventKey(connectionId, 'e.c.create'));
  });
});
