import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { TestProject } from 'vitest/node';
import { emulatorCa, emulatorCaFile } from '../apps/emulators/src/microsoft/tls';
import { ensureDatabase, migrate } from '../prisma/migrator';
import { dbUrl, TEST_DB_PREFIX } from './support/env';

declare module 'vitest' {
  export interface ProvidedContext {
    testRunId: string;
  }
}

// Every run names its databases syncline_test_<run>_…, so two runs on one machine (two
// terminals, or CI beside a developer) never drop each other's databases.
let runId = '';

async function dropRunDatabases(): Promise<void> {
  const admin = new Client({ connectionString: dbUrl('postgres') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`${TEST_DB_PREFIX}${runId}_%`],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Builds a freshly migrated template database once per run; test files clone it. */
export async function setup(project: TestProject): Promise<void> {
  // The Microsoft emulator serves HTTPS under our own authority: made before any test process
  // starts, and named in NODE_EXTRA_CA_CERTS, which Node reads only as a process starts (the
  // test files' processes are forked after this, and the API and workers they spawn inherit it).
  await emulatorCa();
  process.env.NODE_EXTRA_CA_CERTS = emulatorCaFile();
  runId = randomBytes(4).toString('hex');
  project.provide('testRunId', runId);
  const template = dbUrl(`${TEST_DB_PREFIX}${runId}_template`);
  await ensureDatabase(template);
  await migrate(template);
}

export async function teardown(): Promise<void> {
  await dropRunDatabases();
}
