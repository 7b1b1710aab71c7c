import { ConfigError } from '@syncline/core';
import { loadWorkersConfig } from './config/workers-config';
import { createWorkers, createWorkersLogger } from './workers';

// `npm run workers`. SIGTERM or SIGINT: stop taking jobs, finish running ones, exit 0.
// A second signal exits at once (the handlers are `once`, so the default action applies).
async function main(): Promise<void> {
  let config: ReturnType<typeof loadWorkersConfig>;
  try {
    config = loadWorkersConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const logger = createWorkersLogger(config);
  let workers: Awaited<ReturnType<typeof createWorkers>>;
  try {
    workers = await createWorkers(config, { logger });
  } catch (error) {
    logger.fatal({ err: error }, `workers failed to start: ${(error as Error).message}`);
    process.exit(1);
  }

  const shutdown = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'shutting down');
    workers.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

void main();
