import { Pool } from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { mergeStoreAcceptance } from '../test/merge-store.acceptance';
import { PgMergeStore } from './pg-merge-store';

describe('PgMergeStore', () => {
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

  // Each case runs inside one transaction, as a log consumer's handler does, and commits.
  mergeStoreAcceptance(async (body) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        'TRUNCATE entity_doc, entity_doc_change, entity_synced_heads, merge_conflict, field_policy',
      );
      await body(new PgMergeStore(client));
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  });
});
