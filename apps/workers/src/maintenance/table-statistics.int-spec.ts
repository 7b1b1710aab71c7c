import { createLogger } from '@syncline/core';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { loadWorkersConfig } from '../config/workers-config';
import { TableStatisticsService } from './table-statistics.service';

let db: TestDatabase;
let pool: Pool;
let service: TableStatisticsService;

beforeAll(async () => {
  db = await createTestDatabase('table_stats');
  pool = new Pool({ connectionString: db.url, max: 3 });
  service = new TableStatisticsService(pool, loadWorkersConfig({}), createLogger({ level: 'silent' }));
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const statsOf = async (table: string) =>
  (
    await pool.query<{ analyzed: boolean; mods: string }>(
      `SELECT (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analyzed, n_mod_since_analyze AS mods
         FROM pg_stat_user_tables WHERE relname = $1`,
      [table],
    )
  ).rows[0]!;

/** Table statistics reach the shared counters when a backend flushes them (about a second). */
async function untilCounted(table: string, atLeast: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Number((await statsOf(table)).mods) < atLeast) {
    if (Date.now() > deadline) throw new Error(`${table}: changes never counted`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('TableStatisticsService', () => {
  it('analyzes a table changed past the autoanalyze threshold, and leaves one barely changed alone', async () => {
    await pool.query('CREATE TABLE busy (id int)');
    await pool.query('CREATE TABLE quiet (id int)');
    await pool.query('INSERT INTO busy SELECT generate_series(1, 1000)');
    await pool.query('INSERT INTO quiet SELECT generate_series(1, 10)');
    await untilCounted('busy', 1000);
    await untilCounted('quiet', 10);
    expect((await statsOf('busy')).analyzed).toBe(false);

    const analyzed = await service.analyzeStale();
    expect(analyzed).toContain('public.busy');
    expect(analyzed).not.toContain('public.quiet');
    // The planner now knows the table's size instead of guessing.
    const { rows } = await pool.query<{ reltuples: number }>(
      `SELECT reltuples FROM pg_class WHERE relname = 'busy'`,
    );
    expect(rows[0]!.reltuples).toBe(1000);
    expect((await statsOf('quiet')).analyzed).toBe(false);

    // Changed by less than 10 % of its rows since: not again.
    await pool.query('UPDATE busy SET id = id WHERE id <= 60');
    await untilCounted('busy', 60);
    expect(await service.analyzeStale()).not.toContain('public.busy');
  });

  it('does nothing while another process holds the analysis', async () => {
    await pool.query('CREATE TABLE other (id int)');
    await pool.query('INSERT INTO other SELECT generate_series(1, 500)');
    await untilCounted('other', 500);
    const holder = await pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [0x5e4e, 1]);
      expect(await service.analyzeStale()).toEqual([]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [0x5e4e, 1]);
      holder.release();
    }
    expect(await service.analyzeStale()).toContain('public.other');
  });

  it('moves what a GIN index holds in its pending list into the index, which searches then skip', async () => {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await pool.query('CREATE TABLE searched (name text)');
    await pool.query(
      'CREATE INDEX searched_trgm ON searched USING gin (name gin_trgm_ops) WITH (fastupdate = on)',
    );
    await pool.query(`INSERT INTO searched SELECT 'person ' || i FROM generate_series(1, 2000) AS i`);
    await pool.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
    const pending = async () =>
      (
        await pool.query<{ pages: number }>(
          `SELECT pending_pages AS pages FROM pgstatginindex('searched_trgm')`,
        )
      ).rows[0]!.pages;
    const before = await pending();
    expect(before).toBeGreaterThan(0);

    const { flushed } = await service.upkeep();
    expect(flushed.searched_trgm).toBe(before);
    expect(await pending()).toBe(0);
    // The entries are in the index proper: a search finds them through it.
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM searched WHERE name LIKE '%son 1999%'`,
    );
    expect(rows[0]!.n).toBe('1');
    // Nothing pending: nothing flushed.
    expect((await service.flushGinPendingLists()).searched_trgm).toBeUndefined();
  });
});
