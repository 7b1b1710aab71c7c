import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * Applies prisma/migrations/<timestamp>_<name>/migration.sql in name order and records
 * each in `_prisma_migrations` exactly as `prisma migrate deploy` does (sha256 checksum
 * of the file, finished_at, applied_steps_count), so the official CLI, where it runs,
 * sees them as applied.
 */

export const MIGRATIONS_DIR = join(__dirname, 'migrations');

// The advisory lock key `prisma migrate` itself takes, so ours and theirs exclude each other.
const PRISMA_MIGRATE_LOCK = 72707369;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateReport {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"              VARCHAR(64) NOT NULL,
  "finished_at"           TIMESTAMPTZ,
  "migration_name"        VARCHAR(255) NOT NULL,
  "logs"                  TEXT,
  "rolled_back_at"        TIMESTAMPTZ,
  "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrateReport> {
  const migrations = await readMigrations(dir);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<AppliedRow>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at
         FROM "_prisma_migrations" WHERE rolled_back_at IS NULL ORDER BY started_at`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r]));
    const known = new Set(migrations.map((m) => m.name));

    for (const row of rows) {
      if (row.finished_at === null) {
        throw new MigrationError(
          `migration ${row.migration_name} started but did not finish; repair the database and mark it rolled back before migrating again`,
        );
      }
      if (!known.has(row.migration_name)) {
        throw new MigrationError(
          `migration ${row.migration_name} is applied in the database but missing from ${dir}`,
        );
      }
    }

    // Check everything before applying anything: a refusal must leave the database as it was.
    const report: MigrateReport = { applied: [], alreadyApplied: [] };
    const pending: MigrationFile[] = [];
    for (const m of migrations) {
      const done = applied.get(m.name);
      if (!done) {
        pending.push(m);
        continue;
      }
      if (done.checksum !== m.checksum) {
        throw new MigrationError(
          `migration ${m.name} was modified after it was applied (checksum ${done.checksum} in the database, ${m.checksum} on disk)`,
        );
      }
      const [firstPending] = pending;
      if (firstPending) {
        throw new MigrationError(
          `migration ${m.name} is applied but the earlier ${firstPending.name} is not: order broken`,
        );
      }
      report.alreadyApplied.push(m.name);
    }
    for (const m of pending) {
      await applyOne(client, m);
      report.applied.push(m.name);
    }
    return report;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}

async function applyOne(client: Client, m: MigrationFile): Promise<void> {
  const id = randomUUID();
  await client.query('BEGIN');
  try {
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`,
      [id, m.checksum, m.name],
    );
    await client.query(m.sql);
    await client.query(
      `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new MigrationError(`migration ${m.name} failed: ${(error as Error).message}`);
  }
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new MigrationError(`unsupported database name "${name}"`);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    await admin.query(`CREATE DATABASE "${name}"`);
    return true;
  } catch (error) {
    // Two processes creating the same database: the loser sees "already exists".
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  } finally {
    await admin.end();
  }
}
