import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import {
  createKey,
  createKeySql,
  entityCreateKeySql,
  foldedKeySql,
  isCreateKeySql,
  updateKey,
} from './idempotency-key';
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

  it('spells an entity’s create key with its flags.createAgain, and knows every create key of it', async () => {
    const entityId = randomUUID();
    const connectionId = randomUUID();
    const other = randomUUID();
    const operationId = randomUUID();
    const { rows } = await pool.query<{
      key: string;
      again: string;
      first: boolean;
      next: boolean;
      not: boolean;
    }>(
      `SELECT ${entityCreateKeySql('e', '$2::uuid')} AS key, ${entityCreateKeySql('e', '$3::uuid')} AS again,
              ${isCreateKeySql('$5::text', 'e.id', '$2::uuid')} AS first,
              ${isCreateKeySql('$6::text', 'e.id', '$3::uuid')} AS next,
              ${isCreateKeySql('$7::text', 'e.id', '$2::uuid')} AS not
         FROM (SELECT $1::uuid AS id, jsonb_build_object('createAgain', jsonb_build_object($3::text, $4::text)) AS flags) e`,
      [
        entityId,
        connectionId,
        other,
        operationId,
        createKey(entityId, connectionId),
        createKey(entityId, other, operationId),
        updateKey(entityId, connectionId, ['h1']),
      ],
    );
    expect(rows[0]?.key).toBe(createKey(entityId, connectionId));
    expect(rows[0]?.again).toBe(createKey(entityId, other, operationId));
    expect(rows[0]?.again).not.toBe(createKey(entityId, other));
    expect(rows[0]).toMatchObject({ first: true, next: true, not: false });
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
