import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Keyring } from '@syncline/core';
import { createPrismaClient, type PrismaClient } from '@syncline/core/db';
import type { QueueName } from '@syncline/jobs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { createApp } from '../app.factory';
import { type AppConfig, loadAppConfig } from '../config/app-config';
import { MetricsServer } from '../metrics/metrics-server';
import { WorkspacesRepository } from '../workspaces/workspaces.repository';
import { WorkspacesService } from '../workspaces/workspaces.service';

/** The real app on a private database and the shared Redis (under the test key prefix). */
export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  db: TestDatabase;
  /** A client of our own on the test database, to look at rows the API wrote. */
  prisma: PrismaClient;
  keyring: Keyring;
  /** Every log line the app wrote, as JSON text. */
  logs: string[];
  /** The BullMQ `pull` queue the app adds to, under this app's own key prefix. */
  pullQueue: Queue;
  close(): Promise<void>;
}

/** The settings a test app runs with; `overrides` replace single settings. */
export function testEnv(databaseUrl: string, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    // Per app, so that files running side by side never see (or clean up) each other's jobs.
    REDIS_PREFIX: `${TEST_REDIS_PREFIX}:sync-api-${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'info',
    SYNCLINE_ENCRYPTION_KEYS: `test:${randomBytes(32).toString('base64')}`,
    // Suites that fire hundreds of requests with one key; the limit has its own spec.
    API_RATE_LIMIT_PER_10S: '0',
    // Suites that try many bad keys from one address; the limit has its own spec.
    API_AUTH_FAILURES_PER_MIN: '0',
    // Suites that ask for many sign-in links from one address; the limit has its own spec.
    MAGIC_LINKS_PER_EMAIL_PER_HOUR: '0',
    MAGIC_LINKS_PER_IP_PER_HOUR: '0',
    // Off, so apps side by side take no port; a suite that reads metrics gives it one (freePort).
    API_METRICS_PORT: '0',
    // No web app: the API's own answers (a 404 for an unknown path) whether or not apps/web is
    // built; the suite of the serving gives it one.
    WEB_DIST_DIR: '/nonexistent/syncline-web-dist',
    ...overrides,
  };
}

export async function startTestApp(label: string, overrides: NodeJS.ProcessEnv = {}): Promise<TestApp> {
  const db = await createTestDatabase(`sync_api_${label}`);
  const config = loadAppConfig(testEnv(db.url, overrides));
  const logs: string[] = [];
  const app = await createApp(config, {
    logDestination: { write: (line: string) => void logs.push(line) },
  }).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  const prisma = createPrismaClient(db.url, { max: 2 });
  const queueRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  queueRedis.on('error', () => undefined);
  const pullQueue = new Queue('pull' satisfies QueueName, {
    connection: queueRedis,
    prefix: config.REDIS_PREFIX,
  });
  pullQueue.on('error', () => undefined);
  return {
    app,
    config,
    db,
    prisma,
    keyring: Keyring.parse(config.SYNCLINE_ENCRYPTION_KEYS),
    logs,
    pullQueue,
    async close() {
      await app.close();
      // Leave no keys behind in the shared Redis (a test may point the app at no Redis at all).
      if (config.REDIS_URL === TEST_REDIS_URL) {
        // The queue writes its meta key once connected: wait for that, or it lands after the cleanup.
        await pullQueue.waitUntilReady();
        await pullQueue.obliterate({ force: true });
        await pullQueue.close();
        // Replays and dry runs the app queued (no workers ran them here).
        for (const name of ['replay', 'dry-run'] satisfies QueueName[]) {
          const queue = new Queue(name, { connection: queueRedis, prefix: config.REDIS_PREFIX });
          await queue.obliterate({ force: true });
          await queue.close();
        }
      }
      queueRedis.disconnect();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

/** GET /metrics on the app's metrics port (started with API_METRICS_PORT set, e.g. to a freePort()). */
export async function scrapeMetrics(t: TestApp, path = '/metrics'): Promise<Response> {
  const port = t.app.get(MetricsServer).port;
  if (port === undefined) throw new Error('the metrics port is off: start the app with API_METRICS_PORT');
  return fetch(`http://127.0.0.1:${port}${path}`);
}

/** A new workspace with an admin key, made the way the CLI makes it. */
export async function seedWorkspace(
  prisma: PrismaClient,
  name: string,
): Promise<{ workspaceId: string; adminKey: string }> {
  const created = await new WorkspacesService(new WorkspacesRepository(prisma)).provision({
    name,
    adminEmail: `admin@${name.toLowerCase().replace(/[^a-z0-9]/g, '')}.test`,
  });
  return { workspaceId: created.workspaceId, adminKey: created.apiKey };
}

export const bearer = (key: string): { authorization: string } => ({ authorization: `Bearer ${key}` });

/** A new API key of this role, made through the API by an admin key; returns the full key. */
export async function createApiKey(
  app: TestApp['app'],
  adminKey: string,
  role: 'admin' | 'sales',
  name: string,
): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: bearer(adminKey),
    payload: { name, role },
  });
  if (res.statusCode !== 201) throw new Error(`creating a ${role} key failed: ${res.statusCode} ${res.body}`);
  return res.json<{ key: string }>().key;
}
