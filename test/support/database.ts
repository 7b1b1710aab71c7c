import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { inject } from 'vitest';
import { dbUrl, TEST_DB_PREFIX } from './env';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

const runPrefix = () => `${TEST_DB_PREFIX}${inject('testRunId')}_`;
const slug = (label: string) => label.replace(/[^a-z0-9]/gi, '_').toLowerCase();

/** A private, migrated database for one test file, cloned from the run's template. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `${runPrefix()}${slug(label)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${runPrefix()}template"`);
  return { name, url: dbUrl(name), drop: () => dropDatabase(name) };
}

/**
 * Drops politely first: a pool that has just ended may still be closing its connections,
 * and FORCE would kill them mid-goodbye (an error event nobody listens to any more). A
 * plain DROP waits 5 s for other sessions before it gives up, so the wait for them to go
 * is done here, briefly; a session still there after a second (a LISTEN connection, or a
 * test dropping the database under a running app on purpose) is forced out.
 */
async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    if ((await sessionsOn(name)) === 0) {
      try {
        await adminQuery(`DROP DATABASE IF EXISTS "${name}"`, 0);
        return;
      } catch (error) {
        if (!/being accessed by other users/.test((error as Error).message)) throw error;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

async function sessionsOn(name: string): Promise<number> {
  const admin = new Client({ connectionString: dbUrl('postgres') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await admin.end();
  }
}

/** An empty database (not migrated), for tests of the migrator itself. */
export async function createEmptyDatabase(label: string): Promise<TestDatabase> {
  const name = `${runPrefix()}${slug(label)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  return { name, url: dbUrl(name), drop: () => dropDatabase(name) };
}

async function adminQuery(sql: string, retries = 30): Promise<void> {
  // CREATE DATABASE … TEMPLATE fails while another session is connected to the template,
  // which happens when two files clone at once; retry briefly.
  for (let attempt = 0; ; attempt++) {
    const admin = new Client({ connectionString: dbUrl('postgres') });
    await admin.connect();
    try {
      await admin.query(sql);
      return;
    } catch (error) {
      if (attempt < retries && /being accessed by other users/.test((error as Error).message)) {
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
        continue;
      }
      throw error;
    } finally {
      await admin.end();
    }
  }
}
