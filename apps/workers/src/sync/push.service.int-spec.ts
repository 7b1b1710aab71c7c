import { randomUUID } from 'node:crypto';
import { createLogger } from '@syncline/core';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { loadWorkersConfig } from '../config/workers-config';
import type { ConnectionHandle, ConnectionRuntime } from '../connections/connection-runtime';
import type { IngestLog } from '../connections/ingest-log';
import { JOB_MAP } from '../jobs/job-map';
import type { JobQueue } from '../jobs/job-queue.service';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { PushService } from './push.service';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('push_handoff');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** The outbox claims a pool ran, the first held back `holdMs` so a push stays in progress. */
function countingClaims(real: Pool, holdMs: number) {
  const claims: number[] = [];
  const query = real.query.bind(real) as (...args: unknown[]) => Promise<unknown>;
  const counted = Object.create(real) as Pool;
  (counted as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    // The claim goes as a named statement ({ name, text, values }).
    const text =
      typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    if (!text.includes('FROM outbox o LEFT JOIN entity e')) return query(...args);
    claims.push(Date.now());
    const result = await query(...args);
    if (claims.length === 1) await new Promise((r) => setTimeout(r, holdMs));
    return result;
  };
  return { pool: counted, claims };
}

describe('PushService', () => {
  it('a push asked for while this process pushes the connection is served by the push in progress, not a later window', async () => {
    const connectionId = randomUUID();
    const handle = { id: connectionId, provider: 'hubspot', status: 'live' } as unknown as ConnectionHandle;
    const runtime = { open: async () => handle } as unknown as ConnectionRuntime;
    const enqueued: unknown[] = [];
    const jobs = { enqueue: async (...args: unknown[]) => void enqueued.push(args) } as unknown as JobQueue;
    const { pool: counted, claims } = countingClaims(pool, 300);
    const service = new PushService(
      counted,
      runtime,
      jobs,
      loadWorkersConfig({}),
      new WorkerMetrics(pool, jobs, JOB_MAP, createLogger({ level: 'silent' })),
      {} as IngestLog,
      createLogger({ level: 'silent' }),
    );

    const first = service.push(connectionId);
    while (claims.length === 0) await new Promise((r) => setTimeout(r, 5));
    const second = await service.push(connectionId);
    expect(second.skipped).toBe('handed to the push in progress');
    expect(await first).toEqual({ sent: 0, failed: 0, dropped: 0, existing: 0 });
    // The first push drained once more for the second's sake, and nothing was put off.
    expect(claims).toHaveLength(2);
    expect(enqueued).toEqual([]);

    // A push scheduled while one is in progress in this process (the sync stage's request after
    // a commit) is served by it too: no job, no wait for the next window.
    claims.length = 0;
    const { pool: held, claims: heldClaims } = countingClaims(pool, 300);
    (service as unknown as { pool: Pool }).pool = held;
    const third = service.push(connectionId);
    while (heldClaims.length === 0) await new Promise((r) => setTimeout(r, 5));
    await service.schedule(connectionId);
    await third;
    expect(heldClaims).toHaveLength(2);
    expect(enqueued).toEqual([]);
    // Scheduled when none is in progress: a job.
    await service.schedule(connectionId);
    expect(enqueued).toHaveLength(1);
    enqueued.length = 0;

    // With nothing asked for meanwhile, one claim; and a push after it runs on its own.
    claims.length = 0;
    const { pool: again, claims: alone } = countingClaims(pool, 0);
    (service as unknown as { pool: Pool }).pool = again;
    expect(await service.push(connectionId)).toEqual({ sent: 0, failed: 0, dropped: 0, existing: 0 });
    expect(alone).toHaveLength(1);
  });
});
