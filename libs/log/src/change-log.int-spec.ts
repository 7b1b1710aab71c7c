import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { change, type SeededConnection, seedConnection } from '../../../test/support/fixtures';
import { ChangeLog } from './change-log';

let db: TestDatabase;
let pool: Pool;
let log: ChangeLog;
let conn: SeededConnection;

beforeAll(async () => {
  db = await createTestDatabase('change_log');
  pool = new Pool({ connectionString: db.url, max: 6 });
  log = new ChangeLog(pool, { partitions: 8 });
  await log.init();
  conn = await seedConnection(pool);
});

afterAll(async () => {
  await log.close();
  await pool.end();
  await db.drop();
});

const countEvents = async (): Promise<number> =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event')).rows[0]!.n;

describe('ChangeLog.append', () => {
  it('stores a change once when the same event key is delivered twice', async () => {
    const c = change(conn, { externalId: 'dup-1', eventKey: 'dup-1:v1' });
    const first = await log.append([c]);
    const second = await log.append([{ ...c, fields: { email: 'changed@example.com' } }]);
    expect(first.ok && first.value[0]!.isNew).toBe(true);
    expect(second.ok && second.value[0]!.isNew).toBe(false);
    const { rows } = await pool.query('SELECT fields FROM change_event WHERE event_key = $1', ['dup-1:v1']);
    expect(rows).toEqual([{ fields: { email: 'dup-1@example.com' } }]);
  });

  it('reports a new change as new whatever the case of its ids', async () => {
    const res = await log.append([
      change(
        { workspaceId: conn.workspaceId.toUpperCase(), connectionId: conn.connectionId.toUpperCase() },
        { externalId: 'upper' },
      ),
    ]);
    expect(res.ok && res.value[0]!.isNew).toBe(true);
  });

  it('stores a key once when it arrives twice in one batch', async () => {
    const c = change(conn, { externalId: 'dup-2', eventKey: 'dup-2:v1' });
    const res = await log.append([c, c]);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.value.map((r) => r.isNew)).toEqual([true, false]);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM change_event WHERE event_key = $1', [
      'dup-2:v1',
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('stores a key once when independent appenders race with it', async () => {
    // Separate pools and logs: separate connections and separate transactions.
    const others = Array.from({ length: 4 }, () => new Pool({ connectionString: db.url, max: 2 }));
    const logs = others.map((p) => new ChangeLog(p, { partitions: 8, flushMs: 1 }));
    const keys = Array.from({ length: 50 }, (_, i) => `race-${i}`);
    const outcomes = await Promise.all(
      logs.flatMap((l) => keys.map((k) => l.append([change(conn, { externalId: k, eventKey: `${k}:v1` })]))),
    );
    await Promise.all(logs.map((l) => l.close()));
    await Promise.all(others.map((p) => p.end()));
    const newCount = outcomes.filter((o) => o.ok && o.value[0]!.isNew).length;
    expect(newCount).toBe(keys.length);
    const { rows } = await pool.query<{ event_key: string; n: number }>(
      `SELECT event_key, count(*)::int AS n FROM change_event WHERE event_key LIKE 'race-%' GROUP BY event_key`,
    );
    expect(rows).toHaveLength(keys.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
  });

  it('keeps one source record in one partition, in append order', async () => {
    for (let v = 1; v <= 20; v++) {
      const res = await log.append([
        change(conn, { externalId: 'ordered', eventKey: `ordered:v${v}`, fields: { v } }),
      ]);
      expect(res.ok).toBe(true);
    }
    const { rows } = await pool.query<{ partition: number; v: number }>(
      `SELECT partition, (fields->>'v')::int AS v FROM change_event WHERE external_id = 'ordered' ORDER BY "offset"`,
    );
    expect(new Set(rows.map((r) => r.partition)).size).toBe(1);
    expect(rows.map((r) => r.v)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rows[0]!.partition).toBe(log.partitionOf(conn));
  });

  it('gives concurrent appends unique offsets, leaving gaps only where a duplicate raced', async () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      change(conn, { externalId: `dense-${i % 7}`, eventKey: `dense:${i}` }),
    );
    const results = await Promise.all(many.map((c) => log.append([c])));
    const positions = results.map((r) => {
      if (!r.ok) throw new Error('append failed');
      return `${r.value[0]!.partition}/${r.value[0]!.offset}`;
    });
    expect(new Set(positions).size).toBe(300);
    const { rows } = await pool.query<{ gaps: number }>(
      `SELECT COALESCE(sum(max_o - min_o + 1 - n), 0)::int AS gaps FROM
         (SELECT partition, count(*) AS n, min("offset") AS min_o, max("offset") AS max_o FROM change_event GROUP BY partition) t`,
    );
    // Only dropped redeliveries leave gaps: the race above (4 × 50 − 50) and the two
    // single-key duplicates.
    expect(rows[0]!.gaps).toBeLessThanOrEqual(152);
  });

  it.each([
    ['a missing field', (c: Record<string, unknown>) => ({ ...c, externalId: undefined }), /externalId/],
    [
      'an unknown entity type',
      (c: Record<string, unknown>) => ({ ...c, entityType: 'spaceship' }),
      /entityType/,
    ],
    ['an unknown property', (c: Record<string, unknown>) => ({ ...c, extra: 1 }), /extra|unrecognized/i],
    ['a bad event time', (c: Record<string, unknown>) => ({ ...c, eventTime: 'yesterday' }), /eventTime/],
    ['a NUL character', (c: Record<string, unknown>) => ({ ...c, fields: { name: 'a\u0000b' } }), /NUL/],
    [
      'half a surrogate pair',
      (c: Record<string, unknown>) => ({ ...c, fields: { name: 'Ada \ud83d' } }),
      /lone UTF-16 surrogate/,
    ],
    ['a NUL in the record id', (c: Record<string, unknown>) => ({ ...c, externalId: 'b\u0000d' }), /NUL/],
    [
      'an oversized payload',
      (c: Record<string, unknown>) => ({ ...c, fields: { notes: 'x'.repeat(300 * 1024) } }),
      /over the 262144-byte limit/,
    ],
  ])('refuses %s with a clear error and writes nothing of the batch', async (_label, spoil, message) => {
    const before = await countEvents();
    const good = change(conn, { externalId: 'good-neighbour' });
    const res = await log.append([good, spoil(change(conn, { externalId: 'bad' }))]);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error).toMatchObject({ code: 'Validation', index: 1 });
    expect(res.error.message).toMatch(message);
    expect(await countEvents()).toBe(before);
  });

  it('refuses a change whose connection is not in its workspace, without sinking anyone else', async () => {
    const other = await seedConnection(pool, 'other');
    const [bad, ...good] = await Promise.all([
      log.append([change({ workspaceId: other.workspaceId, connectionId: conn.connectionId })]),
      ...Array.from({ length: 5 }, (_, i) => log.append([change(conn, { externalId: `mate-${i}` })])),
    ]);
    expect(bad!.ok).toBe(false);
    if (!bad!.ok) expect(bad!.error.message).toMatch(/change 0: connectionId: no connection .* in workspace/);
    expect(good.every((g) => g.ok && g.value[0]!.isNew)).toBe(true);
    const unknown = await log.append([
      change({ workspaceId: conn.workspaceId, connectionId: '00000000-0000-4000-8000-000000000000' }),
    ]);
    expect(unknown.ok).toBe(false);
  });

  it('refuses to start with a partition count other than the one the log was created with', async () => {
    await expect(new ChangeLog(pool, { partitions: 4 }).init()).rejects.toThrow(
      /LOG_PARTITIONS is 4 .* 8 partitions/,
    );
  });
});
