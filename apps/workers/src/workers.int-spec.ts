import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../test/support/env';
import { loadWorkersConfig, type WorkersConfig } from './config/workers-config';
import { StartupError } from './infra/connections';
import { JobHandler } from './jobs/job-handler.decorator';
import { JOB_MAP, type JobMap } from './jobs/job-map';
import { RETENTION_SCHEDULER_ID } from './maintenance/retention.scheduler';
import { createWorkers, type Workers } from './workers';

const DAY_MS = 86_400_000;

// The production map plus a queue of test jobs, to drive retries and shutdown.
const TEST_MAP: JobMap = {
  queues: { ...JOB_MAP.queues, test: { attempts: 2, backoffMs: 20 } },
  jobs: {
    ...JOB_MAP.jobs,
    'test.always-fails': { queue: 'test', schema: z.strictObject({ connectionId: z.uuid() }) },
    'test.slow': { queue: 'test', schema: z.strictObject({ ms: z.number().int() }) },
  },
};

@Injectable()
class TestHandlers {
  failures = 0;
  slowFinished = 0;

  @JobHandler('test.always-fails')
  async alwaysFails(): Promise<never> {
    this.failures++;
    throw new Error('provider said no');
  }

  @JobHandler('test.slow')
  async slow(payload: unknown): Promise<string> {
    const { ms } = z.object({ ms: z.number() }).parse(payload);
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.slowFinished++;
    return 'finished';
  }
}

interface DeadLetterRow {
  source: string;
  payload: { queue: string; job: string; jobId: string; data: unknown };
  error_code: string;
  error_message: string;
  attempts: number;
  connection_id: string | null;
  status: string;
}

describe('workers (Postgres + Redis)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let redis: Redis;
  let prefix: string;
  let config: WorkersConfig;
  let workers: Workers;
  let maintenanceEvents: Awaited<ReturnType<typeof openQueueEvents>>;
  const started: Workers[] = [];

  const boot = async (
    overrides: NodeJS.ProcessEnv = {},
    options: Parameters<typeof createWorkers>[1] = {},
  ) => {
    const instance = await createWorkers(loadWorkersConfig({ ...configEnv(), ...overrides }), options);
    started.push(instance);
    return instance;
  };
  const configEnv = (): NodeJS.ProcessEnv => ({
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    // One job at a time: a poison job must not block the one queued behind it.
    WORKER_CONCURRENCY: '1',
    LOG_RETENTION_HOURS: '24',
    RETENTION_INTERVAL_MS: '3600000',
    // This suite is about the job plumbing. A `sync` group member would register offsets at 0
    // on every partition (holding every event back from retention, whatever the test's own
    // `merge` group says) and consume the hand-made events; the sync consumer has suites of its own.
    SYNC_CONSUMER: 'false',
    // No fixed port shared with other suites or a running demo.
    METRICS_PORT: '0',
  });

  beforeAll(async () => {
    db = await createTestDatabase('workers');
    pool = new Pool({ connectionString: db.url, max: 2 });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    prefix = `${TEST_REDIS_PREFIX}:workers-${randomBytes(4).toString('hex')}`;
    config = loadWorkersConfig(configEnv());
    maintenanceEvents = await openQueueEvents(redis, 'maintenance', prefix);
    await maintenanceEvents.waitUntilReady();
    // The scheduler's first run starts at boot; wait for it so the test's own job is the
    // one that finds the old events.
    const firstScheduledRun = waitForCompleted(maintenanceEvents, (id) =>
      id.startsWith('repeat:log.retention:'),
    );
    workers = await createWorkers(config, { jobMap: TEST_MAP, providers: [TestHandlers] });
    started.push(workers);
    await firstScheduledRun;
  });

  afterAll(async () => {
    try {
      for (const instance of started) await instance.close();
      await maintenanceEvents?.dispose();
    } finally {
      // Even when closing failed: no test key or database outlives the run.
      if (redis) {
        // The suite's prefix and the per-test ones that extend it.
        await deleteKeys(redis, `${prefix}*`);
        await redis.quit();
      }
      await pool?.end();
      await db?.drop();
    }
  });

  it('schedules log.retention every RETENTION_INTERVAL_MS', async () => {
    const scheduler = await workers.jobs.queue('maintenance').getJobScheduler(RETENTION_SCHEDULER_ID);
    expect(scheduler).toMatchObject({ name: 'log.retention', every: 3_600_000 });
  });

  it('runs an enqueued retention job, which deletes old events every group is past', async () => {
    const { workspaceId, connectionId } = await seedConnection(pool);
    const old = new Date(Date.now() - 30 * DAY_MS);
    // Partition 0: offsets 1, 2 old and consumed; 5, 6 old but not yet consumed by `merge`
    // (committed 3); 7 recent. The gap 3-4 keeps the test independent of whether a
    // committed offset means "last processed" or "next to read".
    await pool.query(`INSERT INTO log_partition (partition, next_offset) VALUES (0, 8)`);
    for (const [offset, ingestedAt] of [
      [1, old],
      [2, old],
      [5, old],
      [6, old],
      [7, new Date()],
    ] as const) {
      await pool.query(
        `INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                                   external_id, op, event_time, ingested_at)
         VALUES (0, $1, $2, $3, $4, 'person', 'c-1', 'upsert', $5, $5)`,
        [offset, workspaceId, connectionId, `key-${offset}`, ingestedAt],
      );
    }
    await pool.query(
      `INSERT INTO consumer_offset (group_name, partition, committed_offset) VALUES ('merge', 0, 3)`,
    );

    const done = waitForCompleted(maintenanceEvents, (id) => id === 'log.retention');
    const jobId = await workers.jobs.enqueue('log.retention', {});
    expect(jobId).toBe('log.retention');
    expect(await done).toMatchObject({ skipped: false, deleted: 2, heldBackByGroups: 2, retentionHours: 24 });

    const { rows } = await pool.query<{ offset: string }>(
      `SELECT "offset" FROM change_event WHERE partition = 0 ORDER BY "offset"`,
    );
    expect(rows.map((r) => Number(r.offset))).toEqual([5, 6, 7]);
  });

  it('dead-letters an invalid payload without retrying it, and the queue keeps moving', async () => {
    const queue = workers.jobs.queue('maintenance');
    const validDone = waitForCompleted(maintenanceEvents, (id) => id === 'log.retention');
    // Behind one worker slot: the poison job first, a valid one after it.
    await queue.add('log.retention', { bogus: true }, { jobId: 'poison-1' });
    await workers.jobs.enqueue('log.retention', {});
    await validDone;

    const row = await waitForDeadLetter(pool, 'poison-1');
    expect(row).toMatchObject({
      source: 'queue',
      payload: { queue: 'maintenance', job: 'log.retention', jobId: 'poison-1', data: { bogus: true } },
      error_code: 'Validation',
      attempts: 1,
      status: 'open',
    });
    expect(row.error_message).toMatch(/invalid payload for job log\.retention/);
    // Copied to Postgres, then removed from Redis: nothing left to block its id.
    await waitFor(async () => (await queue.getJob('poison-1')) === undefined);
  });

  it('retries a failing job with backoff, then dead-letters it with its attempts', async () => {
    const connectionId = randomUUID();
    const handlers = workers.app.get(TestHandlers);
    const jobId = `fails-${randomBytes(3).toString('hex')}`;
    await workers.jobs.queue('test').add('test.always-fails', { connectionId }, { jobId });

    const row = await waitForDeadLetter(pool, jobId);
    expect(handlers.failures).toBe(2);
    expect(row).toMatchObject({
      source: 'queue',
      payload: { queue: 'test', job: 'test.always-fails', data: { connectionId } },
      error_code: 'Exhausted',
      error_message: 'provider said no',
      attempts: 2,
      connection_id: connectionId,
    });
  });

  it('at boot, dead-letters jobs a dead process left failed in Redis', async () => {
    // A plain BullMQ worker fails a job and goes away before anything is recorded.
    const own = `${prefix}-sweep`;
    const queue = new Queue('test', { connection: redis, prefix: own });
    const crashedConnection = redis.duplicate({ maxRetriesPerRequest: null });
    const crashed = new Worker(
      'test',
      async () => {
        throw new Error('died mid-job');
      },
      { connection: crashedConnection, prefix: own },
    );
    try {
      const connectionId = randomUUID();
      const job = await queue.add(
        'test.always-fails',
        { connectionId },
        { jobId: 'left-behind', attempts: 1 },
      );
      await waitFor(async () => (await job.getState()) === 'failed');
      await crashed.close();

      await boot({ REDIS_PREFIX: own }, { jobMap: TEST_MAP, providers: [TestHandlers] });

      expect(await waitForDeadLetter(pool, 'left-behind')).toMatchObject({
        payload: { queue: 'test', job: 'test.always-fails', data: { connectionId } },
        error_code: 'Exhausted',
        error_message: 'died mid-job',
        connection_id: connectionId,
      });
      await waitFor(async () => (await queue.getJob('left-behind')) === undefined);
    } finally {
      await crashed.close();
      crashedConnection.disconnect();
      await queue.close();
    }
  });

  it('refuses to boot when a job in the map has no handler, naming the job', async () => {
    const orphaned: JobMap = {
      queues: JOB_MAP.queues,
      jobs: { ...JOB_MAP.jobs, 'test.orphan': { queue: 'maintenance', schema: z.strictObject({}) } },
    };
    await expect(boot({}, { jobMap: orphaned })).rejects.toThrow(/job test\.orphan has no handler/);
  });

  it('stops gracefully: a running job finishes before close() resolves', async () => {
    // A prefix of its own, so the suite's main instance cannot take the job.
    const instance = await boot(
      { REDIS_PREFIX: `${prefix}-graceful` },
      { jobMap: TEST_MAP, providers: [TestHandlers] },
    );
    const handlers = instance.app.get(TestHandlers);
    const job = await instance.jobs.queue('test').add('test.slow', { ms: 500 });
    await waitFor(async () => (await job.getState()) === 'active');
    await instance.close();
    expect(handlers.slowFinished).toBe(1);
  });

  it('with LOG_RETENTION_HOURS=0 removes the schedule and deletes nothing', async () => {
    const own = { REDIS_PREFIX: `${prefix}-keep` };
    const retaining = await boot(own);
    expect(await retaining.jobs.queue('maintenance').getJobScheduler(RETENTION_SCHEDULER_ID)).toBeDefined();
    await retaining.close();

    const keepForever = await boot({ ...own, LOG_RETENTION_HOURS: '0' });
    const queue = keepForever.jobs.queue('maintenance');
    expect(await queue.getJobScheduler(RETENTION_SCHEDULER_ID)).toBeUndefined();

    const before = await countEvents(pool);
    expect(before).toBeGreaterThan(0);
    // Every remaining event is now consumed by every group; only old ones would go.
    await pool.query(`UPDATE change_event SET ingested_at = now() - interval '30 days'`);
    await pool.query(`UPDATE consumer_offset SET committed_offset = 100`);
    const events = await openQueueEvents(redis, 'maintenance', own.REDIS_PREFIX);
    try {
      await events.waitUntilReady();
      const done = waitForCompleted(events, (id) => id === 'log.retention');
      await keepForever.jobs.enqueue('log.retention', {});
      expect(await done).toEqual({ skipped: true });
    } finally {
      await events.dispose();
    }
    expect(await countEvents(pool)).toBe(before);
  });

  it('fails fast with a clear message when Redis or Postgres is unreachable or not migrated', async () => {
    await expect(createWorkers({ ...config, REDIS_URL: 'redis://127.0.0.1:1' })).rejects.toThrow(
      /cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\)/,
    );
    await expect(
      createWorkers({ ...config, DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nope' }),
    ).rejects.toThrow(StartupError);
    const empty = await createEmptyDatabase('workers_unmigrated');
    try {
      await expect(createWorkers({ ...config, DATABASE_URL: empty.url })).rejects.toThrow(
        /is not migrated: missing change_event.*run npm run migrate/,
      );
    } finally {
      await empty.drop();
    }
  });
});

async function seedConnection(pool: Pool): Promise<{ workspaceId: string; connectionId: string }> {
  const workspaceId = randomUUID();
  const connectionId = randomUUID();
  await pool.query(`INSERT INTO workspace (id, name) VALUES ($1, 'acme')`, [workspaceId]);
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES ($1, $2, 'hubspot', 'portal-1', 'live')`,
    [connectionId, workspaceId],
  );
  return { workspaceId, connectionId };
}

async function countEvents(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event');
  return rows[0]?.n ?? 0;
}

/**
 * QueueEvents on a connection of its own, closed with it (BullMQ leaves a passed-in client
 * open), reading every event after the ones already in the stream: from `$`, BullMQ's default,
 * an event written between `waitUntilReady` and its first read would be missed.
 */
async function openQueueEvents(
  redis: Redis,
  queue: string,
  prefix: string,
): Promise<QueueEvents & { dispose(): Promise<void> }> {
  const [last] = await redis.xrevrange(`${prefix}:${queue}:events`, '+', '-', 'COUNT', 1);
  const connection = redis.duplicate({ maxRetriesPerRequest: null });
  const events = new QueueEvents(queue, { connection, prefix, lastEventId: last?.[0] ?? '0-0' });
  return Object.assign(events, {
    dispose: async () => {
      await events.close();
      connection.disconnect();
    },
  });
}

/** Resolves with the return value of the first completed job whose id matches; set up before enqueueing. */
function waitForCompleted(
  events: QueueEvents,
  matches: (jobId: string) => boolean,
  timeoutMs = 15_000,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      events.off('completed', onCompleted);
      reject(new Error('timed out waiting for a job to complete'));
    }, timeoutMs);
    const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
      if (!matches(jobId)) return;
      clearTimeout(timer);
      events.off('completed', onCompleted);
      resolve(typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue);
    };
    events.on('completed', onCompleted);
  });
}

async function waitForDeadLetter(pool: Pool, jobId: string): Promise<DeadLetterRow> {
  let row: DeadLetterRow | undefined;
  await waitFor(async () => {
    const { rows } = await pool.query<DeadLetterRow>(
      `SELECT source, payload, error_code, error_message, attempts, connection_id, status::text AS status
         FROM dead_letter WHERE payload->>'jobId' = $1`,
      [jobId],
    );
    row = rows[0];
    return row !== undefined;
  });
  return row!;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
