// `npm run openapi`: the API's OpenAPI document, built in-process (the app is created, not
// listened on) on a scratch database, written to the web app as openapi.json, then typed
// by openapi-typescript as schema.d.ts. Both are committed; a test fails when they drift.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { createApp } from '../apps/sync-api/src/app.factory';
import { loadAppConfig } from '../apps/sync-api/src/config/app-config';
import { OPENAPI_JSON_PATH } from '../apps/sync-api/src/openapi/openapi';
import { ensureDatabase, migrate } from '../prisma/migrator';

const ROOT = join(__dirname, '..');
export const WEB_OPENAPI_JSON = join(ROOT, 'apps/web/src/api/openapi.json');
const WEB_SCHEMA_TS = join(ROOT, 'apps/web/src/api/schema.d.ts');

/** The document as the web app commits it: the API's own, with stable formatting. */
export async function openApiDocumentText(app: NestFastifyApplication): Promise<string> {
  const res = await app.inject({ method: 'GET', url: `/${OPENAPI_JSON_PATH}` });
  if (res.statusCode !== 200) throw new Error(`GET /${OPENAPI_JSON_PATH} answered ${res.statusCode}`);
  return `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
}

async function main(): Promise<void> {
  const server = process.env.OPENAPI_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';
  const name = `syncline_openapi_${randomBytes(4).toString('hex')}`;
  const databaseUrl = `${server}/${name}`;
  await ensureDatabase(databaseUrl);
  try {
    await migrate(databaseUrl);
    const config = loadAppConfig({
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `syncline-openapi-${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: 'error',
      SYNCLINE_ENCRYPTION_KEYS: `openapi:${randomBytes(32).toString('base64')}`,
      API_METRICS_PORT: '0',
    });
    const app = await createApp(config, { logDestination: { write: () => undefined } });
    try {
      writeFileSync(WEB_OPENAPI_JSON, await openApiDocumentText(app));
    } finally {
      await app.close();
    }
  } finally {
    const admin = new Client({ connectionString: `${server}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
  execFileSync('npx', ['--no-install', 'openapi-typescript', WEB_OPENAPI_JSON, '-o', WEB_SCHEMA_TS], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  console.log(`wrote ${WEB_OPENAPI_JSON} and ${WEB_SCHEMA_TS}`);
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
