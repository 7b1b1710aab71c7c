import { createLogger } from '@syncline/core';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { loadWorkersConfig } from '../config/workers-config';
import { HealthSamplerService } from './health-sampler.service';

let db: TestDatabase;
let pool: Pool;
const config = loadWorkersConfig({
  HEALTH_SAMPLE_INTERVAL_MS: '60000',
  HEALTH_HISTORY_RETENTION_HOURS: '72',
});
const sampler = () => new HealthSamplerService(pool, config, createLogger({ level: 'silent' }));

const ACME = '0190a000-0000-7000-8000-00000000a001';
const GLOBEX = '0190a000-0000-7000-8000-00000000b001';
const HUBSPOT = '0190a000-0000-7000-8000-00000000a101';
const CALENDAR = '0190a000-0000-7000-8000-00000000a102';
const INTERNAL = '0190a000-0000-7000-8000-00000000a103';
const GLOBEX_HUBSPOT = '0190a000-0000-7000-8000-00000000b101';
// An interval boundary (60 s) plus 10 s: the samples' time is the boundary.
const NOW = new Date('2026-12-11T10:00:10.000Z');
const BUCKET = new Date('2026-12-11T10:00:00.000Z');

interface SampleRow {
  connection_id: string;
  sampled_at: Date;
  status: string;
  lag_events: number;
  watermark_delay_seconds: number | null;
  backfill_seen: number;
  backfill_total: number | null;
  pending_writes: number;
  writes_ok: number;
  writes_failed: Record<string, number>;
  dead_letters_open: number;
  consumer_lag: number;
}

const samples = async (workspaceId: string) =>
  (
    await pool.query<SampleRow>(
      'SELECT * FROM sync_health_sample WHERE workspace_id = $1 ORDER BY sampled_at, connection_id',
      [workspaceId],
    )
  ).rows;

async function outbox(connectionId: string, workspaceId: string, key: string, status: string, sentAt?: Date) {
  await pool.query(
    `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key, status, sent_at)
     VALUES ($1, gen_random_uuid(), 'person', $2, 'update', '{}', '{}', $3, $4, $5)`,
    [workspaceId, connectionId, key, status, sentAt ?? null],
  );
}

async function deadLetter(connectionId: string, workspaceId: string, code: string, at: Date) {
  await pool.query(
    `INSERT INTO dead_letter (id, workspace_id, connection_id, source, payload, error_code, error_message, created_at)
     VALUES (gen_random_uuid(), $1, $2, 'push', '{}', $3, 'refused', $4)`,
    [workspaceId, connectionId, code, at],
  );
}

beforeAll(async () => {
  db = await createTestDatabase('health_sampler');
  pool = new Pool({ connectionString: db.url, max: 6 });
  await pool.query(`INSERT INTO workspace (id, name) VALUES ($1, 'Acme'), ($2, 'Globex')`, [ACME, GLOBEX]);
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, watermark, backfill_seen, backfill_total)
     VALUES ($1, $4, 'hubspot', '4711', 'live', $6::timestamptz - interval '90 seconds', 500, 500),
            ($2, $4, 'google-calendar', 'ada@acme.test', 'backfilling', NULL, 40, NULL),
            ($3, $4, 'syncline', 'internal', 'live', NULL, 0, NULL),
            ($5, $7, 'hubspot', '9000', 'paused', NULL, 0, NULL)`,
    [HUBSPOT, CALENDAR, INTERNAL, ACME, GLOBEX_HUBSPOT, NOW, GLOBEX],
  );
  // Two events of the HubSpot connection past the sync group's committed offset, one behind it.
  await pool.query(`INSERT INTO log_partition (partition, next_offset) VALUES (3, 4)`);
  await pool.query(
    `INSERT INTO consumer_offset (group_name, partition, committed_offset) VALUES ('sync', 3, 1)`,
  );
  for (const offset of [1, 2, 3])
    await pool.query(
      `INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type, external_id, op, event_time)
       VALUES (3, $1, $2, $3, $4, 'person', $5, 'upsert', now())`,
      [offset, ACME, HUBSPOT, `k${offset}`, String(offset)],
    );
  // Pending writes now; two sent in the interval before the sample, one sent before that.
  await outbox(HUBSPOT, ACME, 'p1', 'pending');
  await outbox(HUBSPOT, ACME, 'p2', 'sending');
  await outbox(HUBSPOT, ACME, 's1', 'sent', new Date(BUCKET.getTime() - 30_000));
  await outbox(HUBSPOT, ACME, 's2', 'sent', new Date(BUCKET.getTime() - 1_000));
  await outbox(HUBSPOT, ACME, 's3', 'sent', new Date(BUCKET.getTime() - 61_000));
  await deadLetter(HUBSPOT, ACME, 'ValidationFailed', new Date(BUCKET.getTime() - 20_000));
  await deadLetter(HUBSPOT, ACME, 'ValidationFailed', new Date(BUCKET.getTime() - 10_000));
  await deadLetter(HUBSPOT, ACME, 'NotFound', new Date(BUCKET.getTime() - 5_000));
  // Refused before the interval: open, but not a failure of this interval.
  await deadLetter(HUBSPOT, ACME, 'NotFound', new Date(BUCKET.getTime() - 120_000));
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('HealthSamplerService', () => {
  it("writes one sample per provider connection of every workspace, with the interval's writes and the workspace's figures", async () => {
    const outcome = await sampler().sample(NOW);
    expect(outcome).toMatchObject({ sampledAt: BUCKET, workspaces: 2, written: 3 });

    const acme = await samples(ACME);
    expect(acme.map((s) => s.connection_id).sort()).toEqual([HUBSPOT, CALENDAR].sort());
    const hubspot = acme.find((s) => s.connection_id === HUBSPOT)!;
    expect(hubspot).toMatchObject({
      sampled_at: BUCKET,
      status: 'live',
      lag_events: 2,
      // The watermark is 80 s behind the sample's time (the interval's start).
      watermark_delay_seconds: 80,
      backfill_seen: 500,
      backfill_total: 500,
      pending_writes: 2,
      writes_ok: 2,
      writes_failed: { ValidationFailed: 2, NotFound: 1 },
      dead_letters_open: 4,
      consumer_lag: 2,
    });
    const calendar = acme.find((s) => s.connection_id === CALENDAR)!;
    expect(calendar).toMatchObject({
      status: 'backfilling',
      lag_events: 0,
      watermark_delay_seconds: null,
      backfill_total: null,
      pending_writes: 0,
      writes_ok: 0,
      writes_failed: {},
      dead_letters_open: 4,
      consumer_lag: 2,
    });
    // The other workspace's connection has its own sample, with none of Acme's figures.
    expect(await samples(GLOBEX)).toEqual([
      expect.objectContaining({
        connection_id: GLOBEX_HUBSPOT,
        status: 'paused',
        pending_writes: 0,
        dead_letters_open: 0,
        consumer_lag: 0,
      }),
    ]);
  });

  it('samples an interval once, however many samplers run it', async () => {
    const later = new Date(NOW.getTime() + 60_000);
    const outcomes = await Promise.all([sampler().sample(later), sampler().sample(later)]);
    expect(outcomes.map((o) => o.written).sort()).toEqual([0, 3]);
    // Again within the same interval: nothing more.
    expect((await sampler().sample(new Date(later.getTime() + 40_000))).written).toBe(0);
    const times = (await samples(ACME)).map((s) => s.sampled_at.toISOString());
    expect(times).toEqual([
      BUCKET.toISOString(),
      BUCKET.toISOString(),
      new Date(BUCKET.getTime() + 60_000).toISOString(),
      new Date(BUCKET.getTime() + 60_000).toISOString(),
    ]);
  });

  it('deletes samples past the retention and keeps the newer ones', async () => {
    // Three days and a minute after the first sample: it is past 72 hours, the second is not.
    const outcome = await sampler().sample(new Date(BUCKET.getTime() + 72 * 3_600_000 + 30_000));
    expect(outcome.deleted).toBe(3);
    const times = new Set((await samples(ACME)).map((s) => s.sampled_at.getTime()));
    expect(times.has(BUCKET.getTime())).toBe(false);
    expect(times.has(BUCKET.getTime() + 60_000)).toBe(true);
    expect(times.has(BUCKET.getTime() + 72 * 3_600_000)).toBe(true);
  });
});
