import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmptyDatabase, type TestDatabase } from '../test/support/database';
import { dbUrl } from '../test/support/env';
import { ensureDatabase, MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from './migrator';
import { createMigrationDir, type MigrationDir } from './test-support/migration-dir';

// Two migrations where the second needs the first. Written to disk second-first, so the
// directory listing order is not the name order.
const CREATE = ['20260101000000_create_note', 'CREATE TABLE note (id integer PRIMARY KEY);'] as const;
const ALTER = [
  '20260102000000_add_note_body',
  "ALTER TABLE note ADD COLUMN body text NOT NULL DEFAULT '';",
] as const;

describe('migrator', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const emptyDb = async (): Promise<TestDatabase> => {
    const db = await createEmptyDatabase('migrator');
    cleanups.push(db.drop);
    return db;
  };
  const tempDir = async (...migrations: (readonly [string, string])[]): Promise<MigrationDir> => {
    const dir = await createMigrationDir();
    cleanups.push(dir.remove);
    for (const [name, sql] of migrations) await dir.write(name, sql);
    return dir;
  };
  const query = async <R extends object>(url: string, sql: string): Promise<R[]> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(sql)).rows;
    } finally {
      await client.end();
    }
  };
  const appliedNames = async (url: string): Promise<string[]> =>
    (
      await query<{ migration_name: string }>(
        url,
        'SELECT migration_name FROM _prisma_migrations ORDER BY started_at, migration_name',
      )
    ).map((r) => r.migration_name);
  const tableExists = async (url: string, table: string): Promise<boolean> =>
    (await query<{ ok: boolean }>(url, `SELECT to_regclass('${table}') IS NOT NULL AS ok`))[0]?.ok === true;

  it('is idempotent: a second run applies nothing', async () => {
    const db = await emptyDb();
    const names = (await readMigrations()).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);

    expect(await migrate(db.url)).toEqual({ applied: names, alreadyApplied: [] });
    expect(await migrate(db.url)).toEqual({ applied: [], alreadyApplied: names });
    expect(await appliedNames(db.url)).toEqual(names);
  });

  it('applies migrations in name order, not directory order', async () => {
    const db = await emptyDb();
    const dir = await tempDir(ALTER, CREATE);

    const report = await migrate(db.url, dir.path);

    expect(report.applied).toEqual([CREATE[0], ALTER[0]]);
    const columns = await query<{ column_name: string }>(
      db.url,
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'note' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'body']);
  });

  it('refuses a migration changed after it was applied, and applies nothing further', async () => {
    const db = await emptyDb();
    const dir = await tempDir(CREATE);
    await migrate(db.url, dir.path);

    await dir.write(CREATE[0], `${CREATE[1]}\n-- an afterthought`);
    await dir.write(...ALTER);

    const run = migrate(db.url, dir.path);
    await expect(run).rejects.toThrow(MigrationError);
    await expect(run).rejects.toThrow(
      new RegExp(
        `migration ${CREATE[0]} was modified after it was applied \\(checksum [0-9a-f]{64} in the database`,
      ),
    );
    expect(await appliedNames(db.url)).toEqual([CREATE[0]]);
    const columns = await query(
      db.url,
      `SELECT 1 FROM information_schema.columns WHERE column_name = 'body'`,
    );
    expect(columns).toHaveLength(0);
  });

  it('refuses a new migration that sorts before an applied one, before applying it', async () => {
    const db = await emptyDb();
    const dir = await tempDir(['20260103000000_later', 'CREATE TABLE later (id int);']);
    await migrate(db.url, dir.path);
    await dir.write('20260101000000_earlier', 'CREATE TABLE earlier (id int);');

    await expect(migrate(db.url, dir.path)).rejects.toThrow(
      /migration 20260103000000_later is applied but the earlier 20260101000000_earlier is not: order broken/,
    );
    expect(await tableExists(db.url, 'earlier')).toBe(false);
    expect(await appliedNames(db.url)).toEqual(['20260103000000_later']);
  });

  it('refuses when a migration applied in the database is missing on disk', async () => {
    const db = await emptyDb();
    const dir = await tempDir(CREATE);
    await migrate(db.url, dir.path);
    const other = await tempDir(ALTER);

    await expect(migrate(db.url, other.path)).rejects.toThrow(
      new RegExp(`migration ${CREATE[0]} is applied in the database but missing from`),
    );
  });

  it('rolls a failing migration back, reports it, and leaves earlier ones applied', async () => {
    const db = await emptyDb();
    const failing = ['20260102000000_broken', 'CREATE TABLE half_done (id int);\nSELECT 1 / 0;'] as const;
    const dir = await tempDir(CREATE, failing);

    const run = migrate(db.url, dir.path);
    await expect(run).rejects.toThrow(MigrationError);
    await expect(run).rejects.toThrow(/migration 20260102000000_broken failed: division by zero/);

    expect(await tableExists(db.url, 'half_done')).toBe(false);
    expect(await appliedNames(db.url)).toEqual([CREATE[0]]);

    // Fixed, it applies on the next run.
    await dir.write(failing[0], 'CREATE TABLE half_done (id int);');
    expect(await migrate(db.url, dir.path)).toEqual({ applied: [failing[0]], alreadyApplied: [CREATE[0]] });
  });

  it('applies each migration exactly once when two migrate() calls race on one database', async () => {
    const db = await emptyDb();
    // The second migration would fail on a second run (duplicate key) and counts its runs.
    const dir = await tempDir(
      CREATE,
      ['20260101120000_seed_note', 'SELECT pg_sleep(0.2);\nINSERT INTO note (id) VALUES (1);'],
      ALTER,
    );

    const [a, b] = await Promise.all([migrate(db.url, dir.path), migrate(db.url, dir.path)]);

    const names = [CREATE[0], '20260101120000_seed_note', ALTER[0]];
    expect([...a.applied, ...b.applied].sort()).toEqual(names);
    // The one that waited for the lock found everything done.
    expect([a.applied.length, b.applied.length].sort()).toEqual([0, 3]);
    expect(await appliedNames(db.url)).toEqual(names);
    expect(await query(db.url, 'SELECT id FROM note')).toEqual([{ id: 1 }]);
  });

  it('records rows the way prisma migrate deploy does', async () => {
    const db = await emptyDb();
    await migrate(db.url);

    const columns = await query<{ column_name: string; data_type: string; is_nullable: string }>(
      db.url,
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'checksum', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'migration_name', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'logs', data_type: 'text', is_nullable: 'YES' },
      { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'started_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
      { column_name: 'applied_steps_count', data_type: 'integer', is_nullable: 'NO' },
    ]);

    const rows = await query<{
      id: string;
      checksum: string;
      finished_at: Date | null;
      migration_name: string;
      logs: string | null;
      rolled_back_at: Date | null;
      started_at: Date;
      applied_steps_count: number;
    }>(db.url, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    const onDisk = (await readMigrations()).map((m) => m.name);
    expect(rows.map((r) => r.migration_name)).toEqual(onDisk);
    for (const row of rows) {
      const file = await readFile(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.checksum).toBe(createHash('sha256').update(file).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row).toMatchObject({ logs: null, rolled_back_at: null, applied_steps_count: 1 });
    }
  });

  it('ensureDatabase creates a missing database once', async () => {
    const name = `syncline_test_ensure_${Date.now().toString(36)}`;
    const url = dbUrl(name);
    cleanups.push(async () => {
      await query(dbUrl('postgres'), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);
  });
});
