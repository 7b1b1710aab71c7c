import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { startTestApp, type TestApp } from '../../../sync-api/src/testing/test-app';
import { loadWorkersConfig } from '../config/workers-config';
import { createWorkers, type Workers } from '../workers';

/** Polls until `check` passes (it throws while not yet), then answers what it returned. */
export async function eventually<T>(
  check: () => Promise<T>,
  timeoutMs = 40_000,
  intervalMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** A call of an emulator's control API (`/_emulator/…`), failing on any non-2xx answer. */
export { emulatorControl } from '@syncline/emulators';

/** The emulators, the API (in-process, on a test database) and the real workers beside it. */
export interface ApiAndWorkers {
  emulators: RunningEmulators;
  t: TestApp;
  workers: Workers;
  pool: Pool;
  stop(): Promise<void>;
}

/**
 * Starts the API on a fresh test database and the workers on the same database and Redis
 * prefix (the pulls the API queues are theirs to run), both pointed at `emulators`' HubSpot
 * as the app `hubspot` names. Scheduled pulls are off (once at boot): the tests ask for them.
 */
export async function startApiAndWorkers(options: {
  label: string;
  emulators?: RunningEmulators;
  hubspot: { appId: number; clientId: string | undefined; clientSecret: string };
  /** The Google emulator's OAuth client, for Calendar, Gmail and Tasks connections (none without it). */
  google?: { clientId: string; clientSecret: string };
  appEnv?: NodeJS.ProcessEnv;
  /** Variable that, when set, is the workers' log level (silent otherwise). */
  logLevelVar: string;
}): Promise<ApiAndWorkers> {
  const emulators = options.emulators ?? (await startEmulators({ hubspotPort: 0, googlePort: 0 }));
  // The API asks the provider whose account a connection's credentials open: the emulators.
  const t = await startTestApp(options.label, {
    HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
    GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
    GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
    ...options.appEnv,
  });
  const pool = new Pool({ connectionString: t.db.url, max: 3 });
  const workers = await createWorkers(
    loadWorkersConfig({
      DATABASE_URL: t.db.url,
      REDIS_URL: t.config.REDIS_URL,
      REDIS_PREFIX: t.config.REDIS_PREFIX,
      SYNCLINE_ENCRYPTION_KEYS: t.config.SYNCLINE_ENCRYPTION_KEYS,
      LOG_LEVEL: process.env[options.logLevelVar] ?? 'silent',
      METRICS_PORT: '0',
      PULL_INTERVAL_MS: '3600000',
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      HUBSPOT_CLIENT_ID: options.hubspot.clientId,
      HUBSPOT_CLIENT_SECRET: options.hubspot.clientSecret,
      HUBSPOT_APP_ID: String(options.hubspot.appId),
      ...(options.google
        ? {
            GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
            GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
            GOOGLE_CLIENT_ID: options.google.clientId,
            GOOGLE_CLIENT_SECRET: options.google.clientSecret,
            // Nobody listens for the emulator's push notifications here: the tests ask for pulls.
            PUBLIC_BASE_URL: 'http://127.0.0.1:9',
          }
        : {}),
    }),
  );
  return {
    emulators,
    t,
    workers,
    pool,
    stop: async () => {
      try {
        await workers.close();
        await emulators.close();
        await pool.end();
      } finally {
        // The API's close empties its pull queue; the workers' other queues share its prefix.
        await t.close();
        const redis = new Redis(t.config.REDIS_URL, { maxRetriesPerRequest: 1 });
        try {
          const keys = await redis.keys(`${t.config.REDIS_PREFIX}:*`);
          if (keys.length > 0) await redis.del(...keys);
        } finally {
          redis.disconnect();
        }
      }
    },
  };
}
