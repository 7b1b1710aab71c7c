import { baseEnvSchema, ConfigError, parseEnv } from '@syncline/core';
import { ensureDatabase, migrate } from './migrator';

// `npm run migrate`: creates the database if needed and applies pending migrations.
async function main(): Promise<void> {
  const { DATABASE_URL: url } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }));
  if (await ensureDatabase(url)) console.log(`created database ${new URL(url).pathname.slice(1)}`);
  const report = await migrate(url);
  for (const name of report.applied) console.log(`applied ${name}`);
  console.log(
    `migrations: ${report.applied.length} applied, ${report.alreadyApplied.length} already applied`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError || error instanceof Error ? error.message : error);
  process.exit(1);
});
