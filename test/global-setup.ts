import { Client } from 'pg';
import { ensureDatabase, migrate } from '../prisma/migrator';
import { dbUrl, TEMPLATE_DB, TEST_DB_PREFIX } from './support/env';

async function dropTestDatabases(): Promise<void> {
  const admin = new Client({ connectionString: dbUrl('postgres') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2`,
      [`${TEST_DB_PREFIX}%`, TEMPLATE_DB],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Builds a freshly migrated template database once per run; test files clone it. */
export async function setup(): Promise<void> {
  await dropTestDatabases();
  const admin = new Client({ connectionString: dbUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${TEMPLATE_DB}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await ensureDatabase(dbUrl(TEMPLATE_DB));
  await migrate(dbUrl(TEMPLATE_DB));
}

export async function teardown(): Promise<void> {
  await dropTestDatabases();
}
