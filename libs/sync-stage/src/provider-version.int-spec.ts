import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { mayReplace, versionMayReplace } from './provider-version';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('provider_version');
  pool = new Pool({ connectionString: db.url, max: 1 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

// The fold of receipts settles the versions of one record in TypeScript and stores them with
// the SQL condition: the two must answer alike.
describe('a provider version may replace the held one', () => {
  const versions = [
    '2026-12-04T10:00:00.000Z',
    '2026-12-04T10:00:00.001Z',
    '2026-12-04T09:59:59Z',
    '2026-12-05T00:00:00.5Z',
    '"etag-b7"',
    '"etag-a1"',
    '2026-12-04 10:00:00',
    '17',
  ];

  it('answers in TypeScript as in SQL, for every pair and for none held', async () => {
    const pairs = versions.flatMap((next) => [...versions, null].map((held) => ({ next, held })));
    const { rows } = await pool.query<{ may: boolean }>(
      `SELECT ${versionMayReplace('t.next', 't.held')} AS may
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(next, held, i) ORDER BY t.i`,
      [pairs.map((p) => p.next), pairs.map((p) => p.held)],
    );
    expect(rows.map((r) => r.may)).toEqual(pairs.map((p) => mayReplace(p.next, p.held)));
    // The rule itself: an older timestamp never replaces a newer one; anything opaque does.
    expect(mayReplace('2026-12-04T09:59:59Z', '2026-12-04T10:00:00.000Z')).toBe(false);
    expect(mayReplace('2026-12-04T10:00:00.001Z', '2026-12-04T10:00:00.000Z')).toBe(true);
    expect(mayReplace('"etag-a1"', '"etag-b7"')).toBe(true);
    expect(mayReplace('2026-12-04T09:59:59Z', '"etag-b7"')).toBe(true);
  });
});
