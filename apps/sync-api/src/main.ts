import { ConfigError } from '@syncline/core';
import { createApp } from './app.factory';
import { loadAppConfig } from './config/app-config';

async function main(): Promise<void> {
  const config = loadAppConfig();
  const app = await createApp(config);
  app.enableShutdownHooks();
  await app.listen({ port: config.PORT, host: config.HOST });
}

main().catch((error: unknown) => {
  // A bad setting is the operator's to fix: the message names it, a stack would only bury it.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
