import { randomBytes, randomUUID } from 'node:crypto';
import { PgCredentialStore, type StoredCredentials } from '@syncline/connectors';
import { Keyring } from '@syncline/core';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { JOB_MAP, type JobMap, PullRequests } from '@syncline/jobs';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { freePort } from '../../../../test/support/ports';
import { loadWorkersConfig } from '../config/workers-config';
import { JobMapError } from '../jobs/job-handler-registry';
import { pushSubscriptionAad } from '../renew/renew.service';
import { createWorkers, type Workers } from '../workers';
import { WATERMARK_STEP_MS } from './pull.service';

const APP_ID = 5001;
const CLIENT_SECRET = 'pull-spec-secret';
const HUBSPOT_TYPES = ['contacts', 'companies', 'deals', 'meetings', 'tasks', 'emails'] as const;

interface ConnectionRow {
  status: string;
  status_reason: string | null;
  cursors: { backfill?: Record<string, unknown>; live?: Record<string, unknown> };
  backfill_seen: number;
  backfill_total: number | null;
  watermark: Date | null;
  last_pull_at: Date | null;
  last_success_at: Date | null;
  last_error_code: string | null;
}

/**
 * Boots the workers with the production map; while handlers of jobs owned elsewhere are not
 * written yet, with the map minus exactly the jobs the app reports unhandled.
 */
async function bootWorkers(env: NodeJS.ProcessEnv): Promise<Workers> {
  const config = loadWorkersConfig(env);
  try {
    return await createWorkers(config);
  } catch (error) {
    if (!(error instanceof JobMapError)) throw error;
    const unhandled = new Set([...error.message.matchAll(/job (\S+) has no handler/g)].map((m) => m[1]));
    const jobMap: JobMap = {
      queues: JOB_MAP.queues,
      jobs: Object.fromEntries(Object.entries(JOB_MAP.jobs).filter(([name]) => !unhandled.has(name))),
    };
    return createWorkers(config, { jobMap });
  }
}

describe('pull, pull-all and renew through the workers (Postgres, Redis, emulators)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let redis: Redis;
  let prefix: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let metricsPort: number;
  const key = randomBytes(32);
  const keyring = new Keyring({ k1: key }, 'k1');
  let store: PgCredentialStore;
  const workspaces = new Map<string, string>();
  const portalA = 8_100 + Math.floor(Math.random() * 800);
  const portalB = portalA + 1;
  const googleEmail = `dana-${randomBytes(3).toString('hex')}@pull.example`;

  const control = async <T>(base: string, method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  const hubspot = <T>(method: string, path: string, body?: unknown) =>
    control<T>(emulators.hubspotUrl, method, path, body);
  const google = <T>(method: string, path: string, body?: unknown) =>
    control<T>(emulators.googleUrl, method, path, body);

  const row = async (connectionId: string): Promise<ConnectionRow> => {
    const { rows } = await pool.query<ConnectionRow>(
      `SELECT status::text AS status, status_reason, cursors, backfill_seen, backfill_total, watermark,
              last_pull_at, last_success_at, last_error_code
         FROM connection WHERE id = $1`,
      [connectionId],
    );
    return rows[0]!;
  };

  const createConnection = async (
    provider: string,
    externalAccountId: string,
    credentials: StoredCredentials,
  ): Promise<string> => {
    const id = randomUUID();
    // A workspace per connection: with two in one, the merge and writeback (running in the
    // same workers) would copy records between the portals and change what is counted here.
    const workspaceId = randomUUID();
    workspaces.set(id, workspaceId);
    await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `pull spec ${id}`]);
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, $3::provider, $4, 'pending')`,
      [id, workspaceId, provider, externalAccountId],
    );
    await store.save(id, credentials);
    return id;
  };

  const hubspotPortal = async (portalId: number) => {
    const grant = await hubspot<{ accessToken: string; refreshToken: string; clientId: string }>(
      'POST',
      '/_emulator/hubspot/portals',
      { portalId, appId: APP_ID, clientSecret: CLIENT_SECRET },
    );
    return grant;
  };
  const oauth = (grant: { accessToken: string; refreshToken: string }): StoredCredentials => ({
    accessToken: grant.accessToken,
    refreshToken: grant.refreshToken,
    expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
  });

  const countRecords = async (portalId: number): Promise<number> => {
    let total = 0;
    for (const type of HUBSPOT_TYPES) {
      const { results } = await hubspot<{ results: unknown[] }>(
        'GET',
        `/_emulator/hubspot/portals/${portalId}/objects/${type}`,
      );
      total += results.length;
    }
    return total;
  };

  /** The connection's records' changes on the log (its watermarks left out: see watermarksOf). */
  const eventsOf = async (connectionId: string) =>
    (
      await pool.query<{
        external_id: string;
        event_key: string;
        op: string;
        fields: Record<string, unknown>;
      }>(
        `SELECT external_id, event_key, op, fields FROM change_event WHERE connection_id = $1 AND op <> 'watermark'
          ORDER BY "offset"`,
        [connectionId],
      )
    ).rows;

  const watermarksOf = async (connectionId: string) =>
    (
      await pool.query<{ entity_type: string; event_time: Date; offset: string; last_record: string }>(
        `SELECT entity_type, event_time, "offset"::text AS offset,
                (SELECT max("offset") FROM change_event r WHERE r.connection_id = $1 AND r.op <> 'watermark')::text AS last_record
           FROM change_event WHERE connection_id = $1 AND op = 'watermark' ORDER BY "offset"`,
        [connectionId],
      )
    ).rows;

  const pull = (connectionId: string) => workers.jobs.enqueue('connection.pull', { connectionId });

  /** Polls until `check` passes (it throws while not yet). */
  const eventually = async <T>(check: () => Promise<T>, timeoutMs = 30_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await check();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  /** Waits until no pull job is waiting, delayed or running. */
  const pullsSettled = () =>
    eventually(async () => {
      const counts = await workers.jobs
        .queue('pull')
        .getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    });

  beforeAll(async () => {
    db = await createTestDatabase('workers_pull');
    pool = new Pool({ connectionString: db.url, max: 4 });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    prefix = `${TEST_REDIS_PREFIX}:pull-${randomBytes(4).toString('hex')}`;
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    store = new PgCredentialStore(pool, keyring);
    const grant = await hubspotPortal(portalA);
    const googleClient = await google<{ clientId: string; clientSecret: string }>(
      'GET',
      '/_emulator/google/oauth-client',
    );
    metricsPort = await freePort();
    workers = await bootWorkers({
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: process.env.PULL_SPEC_LOG_LEVEL ?? 'silent',
      WORKER_CONCURRENCY: '4',
      // Pulls here are enqueued by the tests; the scheduled one runs once at boot.
      PULL_INTERVAL_MS: '3600000',
      // Small jobs, so a backfill crosses several continuation jobs.
      PULL_JOB_MAX_PAGES: '3',
      METRICS_PORT: String(metricsPort),
      SYNCLINE_ENCRYPTION_KEYS: `k1:${key.toString('base64')}`,
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      HUBSPOT_CLIENT_ID: grant.clientId,
      HUBSPOT_CLIENT_SECRET: CLIENT_SECRET,
      HUBSPOT_APP_ID: String(APP_ID),
      GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
      GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
      GOOGLE_CLIENT_ID: googleClient.clientId,
      GOOGLE_CLIENT_SECRET: googleClient.clientSecret,
      // Nobody listens: the emulator's channel notifications fail fast and are not needed here.
      PUBLIC_BASE_URL: 'http://127.0.0.1:9',
      // Pulls only. The sync stage would write back when seeded records of one portal share
      // a key (they become one entity), and a written record is read again as a new version,
      // which the exact event counts here must not see (e2e/ covers the sync stage).
      SYNC_CONSUMER: 'false',
    });
  });

  afterAll(async () => {
    try {
      await workers?.close();
      await emulators?.close();
    } finally {
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
      await pool?.end();
      await db?.drop();
    }
  });

  let connectionA: string;
  let connectionB: string;

  it('backfills a seeded HubSpot portal to live: every record on the log, counted, cursor handed to pulls', async () => {
    await hubspot('POST', `/_emulator/hubspot/portals/${portalA}/seed/contacts`, { count: 250 });
    await hubspot('POST', `/_emulator/hubspot/portals/${portalA}/seed/companies`, { count: 30 });
    const records = await countRecords(portalA);
    const grant = await hubspotPortal(portalA);
    connectionA = await createConnection('hubspot', String(portalA), oauth(grant));

    await pull(connectionA);
    const live = await eventually(async () => {
      const current = await row(connectionA);
      expect(current.status).toBe('live');
      return current;
    });
    expect(live.backfill_seen).toBe(records);
    expect(live.backfill_total).toBeGreaterThanOrEqual(records);
    expect(live.cursors.backfill).toBeUndefined();
    expect(live.cursors.live).toMatchObject({ phase: 'pull' });
    expect(live.watermark).not.toBeNull();
    expect(live.last_error_code).toBeNull();
    await pullsSettled();
    const events = await eventsOf(connectionA);
    expect(events).toHaveLength(records);
    // Its watermark is on the log too, once per activity type, after the records it vouches for.
    // Rounds since moved connection.watermark on by seconds: less than the step that logs one again.
    const marks = await watermarksOf(connectionA);
    expect(marks.map((m) => m.entity_type).sort()).toEqual(['email_activity', 'meeting']);
    const latest = (await row(connectionA)).watermark!.getTime();
    for (const m of marks) {
      expect(BigInt(m.offset)).toBeGreaterThan(BigInt(m.last_record));
      expect(m.event_time.getTime()).toBeLessThanOrEqual(latest);
      expect(latest - m.event_time.getTime()).toBeLessThan(WATERMARK_STEP_MS);
    }
    expect(new Set(events.map((e) => e.external_id)).size).toBe(records);
    // Pages are held and appended together (one INSERT stamps its rows with one time): the
    // four pages with records (contacts in pages of 100, then companies) went in fewer appends,
    // one per job of PULL_JOB_MAX_PAGES pages at most.
    const { rows: appends } = await pool.query<{ n: number }>(
      `SELECT count(DISTINCT ingested_at)::int AS n FROM change_event WHERE connection_id = $1 AND op <> 'watermark'`,
      [connectionA],
    );
    expect(appends[0]!.n).toBeLessThan(Math.ceil(250 / 100) + 1);
  });

  it('brings a later edit in the portal onto the log with connection.pull', async () => {
    const { results } = await hubspot<{ results: { id: string }[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portalA}/objects/contacts`,
    );
    const target = results[7]!.id;
    await hubspot('PATCH', `/_emulator/hubspot/portals/${portalA}/ui/contacts/${target}`, {
      properties: { firstname: 'Edited Later' },
    });
    await pull(connectionA);
    await eventually(async () => {
      const edits = (await eventsOf(connectionA)).filter(
        (e) => e.external_id === target && JSON.stringify(e.fields).includes('Edited Later'),
      );
      expect(edits).toHaveLength(1);
    });
    await pullsSettled();
    const current = await row(connectionA);
    expect(current.status).toBe('live');
    expect(current.last_pull_at).not.toBeNull();
  });

  it('a revoked grant marks only that connection needs_reauth, cursor kept; another keeps pulling', async () => {
    const grantB = await hubspotPortal(portalB);
    await hubspot('POST', `/_emulator/hubspot/portals/${portalB}/seed/contacts`, { count: 20 });
    connectionB = await createConnection('hubspot', String(portalB), oauth(grantB));
    await pull(connectionB);
    await eventually(async () => expect((await row(connectionB)).status).toBe('live'));
    await pullsSettled();

    const before = await row(connectionA);
    await hubspot('POST', '/_emulator/faults', {
      service: 'hubspot',
      kind: 'revoke-token',
      account: portalA,
      count: 1,
    });
    await pull(connectionA);
    const revoked = await eventually(async () => {
      const current = await row(connectionA);
      expect(current.status).toBe('needs_reauth');
      return current;
    });
    expect(revoked.status_reason).toMatch(/refresh token refused \(BAD_REFRESH_TOKEN\)/);
    expect(revoked.last_error_code).toBe('AuthRevoked');
    expect(revoked.cursors).toEqual(before.cursors);

    // B is unaffected: its edits still arrive.
    const { results } = await hubspot<{ results: { id: string }[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portalB}/objects/contacts`,
    );
    await hubspot('PATCH', `/_emulator/hubspot/portals/${portalB}/ui/contacts/${results[0]!.id}`, {
      properties: { lastname: 'Still Syncing' },
    });
    await pull(connectionB);
    await eventually(async () => {
      const events = await eventsOf(connectionB);
      expect(events.some((e) => JSON.stringify(e.fields).includes('Still Syncing'))).toBe(true);
    });
    // A pull of A while it waits for re-authorisation does nothing.
    await pull(connectionA);
    await pullsSettled();
    expect((await row(connectionA)).status).toBe('needs_reauth');
  });

  it('a pause that lands while a page is read: nothing of it is taken in, and a resume reads it again', async () => {
    const { results } = await hubspot<{ results: { id: string }[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portalB}/objects/contacts`,
    );
    const target = results[3]!.id;
    await hubspot('PATCH', `/_emulator/hubspot/portals/${portalB}/ui/contacts/${target}`, {
      properties: { firstname: 'Read While Pausing' },
    });
    const seen = async () =>
      (await eventsOf(connectionB)).filter(
        (e) => e.external_id === target && JSON.stringify(e.fields).includes('Read While Pausing'),
      ).length;
    const before = await row(connectionB);
    // The portal answers the pull's first read slowly; the admin pauses meanwhile (as the API does).
    await hubspot('POST', '/_emulator/faults', {
      service: 'hubspot',
      kind: 'latency',
      account: portalB,
      ms: 1_500,
      count: 1,
    });
    await pull(connectionB);
    await eventually(async () => expect(await workers.jobs.queue('pull').getActiveCount()).toBe(1));
    await pool.query(
      `UPDATE connection SET status = 'paused', status_reason = 'paused by an admin' WHERE id = $1`,
      [connectionB],
    );
    await pullsSettled();
    expect(await seen()).toBe(0);
    const paused = await row(connectionB);
    expect(paused.status).toBe('paused');
    expect(paused.cursors).toEqual(before.cursors);

    await pool.query(`UPDATE connection SET status = 'live', status_reason = NULL WHERE id = $1`, [
      connectionB,
    ]);
    await pull(connectionB);
    await eventually(async () => expect(await seen()).toBe(1));
    await pullsSettled();
  });

  it('after new credentials and a status reset, catches up with nothing lost', async () => {
    const { results } = await hubspot<{ results: { id: string }[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portalA}/objects/contacts`,
    );
    // Edited while the connection could not read.
    await hubspot('PATCH', `/_emulator/hubspot/portals/${portalA}/ui/contacts/${results[3]!.id}`, {
      properties: { firstname: 'While Revoked' },
    });
    const fresh = await hubspot<{ accessToken: string; refreshToken: string }>(
      'POST',
      `/_emulator/hubspot/portals/${portalA}/tokens`,
    );
    // What the API does when credentials are replaced.
    await store.save(connectionA, oauth(fresh));
    await pool.query(`UPDATE connection SET status = 'live', status_reason = NULL WHERE id = $1`, [
      connectionA,
    ]);

    await pull(connectionA);
    await eventually(async () => {
      const events = await eventsOf(connectionA);
      expect(
        events.some(
          (e) => e.external_id === results[3]!.id && JSON.stringify(e.fields).includes('While Revoked'),
        ),
      ).toBe(true);
    });
    await pullsSettled();
    const current = await row(connectionA);
    expect(current.status).toBe('live');
    expect(current.last_error_code).toBeNull();
  });

  let calendarConnection: string;

  it('a Calendar sync token answered 410 resyncs in full, without duplicate event keys', async () => {
    const user = await google<{ accessToken: string; refreshToken: string }>(
      'POST',
      '/_emulator/google/users',
      {
        email: googleEmail,
      },
    );
    for (let i = 0; i < 5; i++) {
      const start = new Date(Date.UTC(2026, 11, 1 + i, 15));
      await google('POST', `/_emulator/google/users/${googleEmail}/ui/calendar/events`, {
        summary: `Call ${i}`,
        start: { dateTime: start.toISOString() },
        end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
      });
    }
    calendarConnection = await createConnection('google-calendar', googleEmail, {
      accessToken: user.accessToken,
      refreshToken: user.refreshToken,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await pull(calendarConnection);
    const live = await eventually(async () => {
      const current = await row(calendarConnection);
      expect(current.status).toBe('live');
      return current;
    });
    await pullsSettled();
    expect(live.backfill_seen).toBe(5);
    const syncToken = live.cursors.live?.syncToken;
    expect(typeof syncToken).toBe('string');

    await google('POST', '/_emulator/faults', {
      service: 'google',
      kind: 'invalidate-cursors',
      account: googleEmail,
      count: 1,
    });
    const start = new Date(Date.UTC(2026, 11, 20, 15));
    await google('POST', `/_emulator/google/users/${googleEmail}/ui/calendar/events`, {
      summary: 'Booked during the outage',
      start: { dateTime: start.toISOString() },
      end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
    });
    await pull(calendarConnection);
    await eventually(async () => {
      const current = await row(calendarConnection);
      expect(current.status).toBe('live');
      expect(current.cursors.live?.syncToken).not.toBe(syncToken);
      expect(current.status_reason).toBeNull();
    });
    await pullsSettled();
    const after = await row(calendarConnection);
    // The full resync counted every event again; the log kept each version once.
    expect(after.backfill_seen).toBe(6);
    const events = await eventsOf(calendarConnection);
    expect(events).toHaveLength(6);
    expect(new Set(events.map((e) => e.event_key)).size).toBe(6);
    expect(new Set(events.map((e) => e.external_id)).size).toBe(6);
    expect(events.some((e) => JSON.stringify(e.fields).includes('Booked during the outage'))).toBe(true);
  });

  it('a pull asked for while one runs (its add dropped as a duplicate) is not lost: the job reads another round', async () => {
    await pullsSettled();
    const listCalls = async () =>
      (
        await google<{ method: string; path: string }[]>(
          'GET',
          `/_emulator/requests?service=google&account=${encodeURIComponent(googleEmail)}`,
        )
      ).filter((r) => r.method === 'GET' && r.path.includes('/calendar/v3/calendars/primary/events')).length;
    const before = await listCalls();
    const queue = workers.jobs.queue('pull');
    const jobId = `pull.${calendarConnection}`;
    // Hold the connection row: the job reads its page, then waits to store the cursor.
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM connection WHERE id = $1 FOR UPDATE', [calendarConnection]);
      await pull(calendarConnection);
      await eventually(async () => {
        expect(await listCalls()).toBeGreaterThan(before);
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE connection%'`,
        );
        expect(rows[0]!.n).toBeGreaterThan(0);
      });
      // A meeting is booked after the job read the calendar; Google notifies, and the API
      // (same handshake as apps/sync-api PullQueue) records the request and adds the pull,
      // which BullMQ drops: that job id is running.
      const start = new Date(Date.UTC(2026, 11, 22, 9));
      await google('POST', `/_emulator/google/users/${googleEmail}/ui/calendar/events`, {
        summary: 'Booked while pulling',
        start: { dateTime: start.toISOString() },
        end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
      });
      const requested = await new PullRequests(redis, prefix).request(calendarConnection);
      expect(requested).toBe(jobId);
      await queue.add(
        'connection.pull',
        { connectionId: calendarConnection, reason: 'calendar exists' },
        { jobId },
      );
      expect(await (await queue.getJob(jobId))?.getState()).toBe('active');
      expect(await queue.getJobCounts('waiting', 'delayed', 'prioritized')).toEqual({
        waiting: 0,
        delayed: 0,
        prioritized: 0,
      });
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    // No scheduled pull comes for an hour: the running job itself reads the booking.
    await eventually(async () => {
      const events = await eventsOf(calendarConnection);
      expect(events.some((e) => JSON.stringify(e.fields).includes('Booked while pulling'))).toBe(true);
    }, 10_000);
    await pullsSettled();
    // The request was taken; the finished job left its closing mark, so the next enqueue adds
    // the other id rather than one a finishing job may still hold.
    expect(await redis.exists(`${prefix}:pull-requested:${calendarConnection}`)).toBe(0);
    expect(await redis.get(`${prefix}:pull-closing:${calendarConnection}`)).toBe(jobId);
  });

  it('the first pull opens a push subscription with a sealed token; connection.renew replaces one close to expiry or gone', async () => {
    // The calendar's first pull (above) subscribed it, before the renewal job ever ran.
    const rows = await subscriptions(calendarConnection);
    expect(rows).toHaveLength(1);
    const first = rows[0]!;
    expect(first.workspace_id).toBe(workspaces.get(calendarConnection));
    expect(first.resource_id).toEqual(expect.any(String));
    expect(first.expires_at.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
    const token = keyring.open(
      { keyId: first.token_key_id, ciphertext: first.token_ciphertext },
      pushSubscriptionAad(first.id),
    );
    expect(token.length).toBeGreaterThanOrEqual(40);
    // Bound to its row: another id's associated data does not open it.
    expect(() =>
      keyring.open(
        { keyId: first.token_key_id, ciphertext: first.token_ciphertext },
        pushSubscriptionAad('other'),
      ),
    ).toThrow();

    // Still valid for long: nothing to do.
    expect(await runRenew()).toMatchObject({ checked: 0, renewed: 0 });

    // Expiring within the hour: a new channel replaces it, the old row goes.
    await pool.query(
      `UPDATE push_subscription SET expires_at = now() + interval '10 minutes' WHERE id = $1`,
      [first.id],
    );
    expect(await runRenew()).toMatchObject({ renewed: 1 });
    const replaced = await subscriptions(calendarConnection);
    expect(replaced).toHaveLength(1);
    expect(replaced[0]!.id).not.toBe(first.id);

    // None at all: the renewal job subscribes it.
    await pool.query('DELETE FROM push_subscription WHERE connection_id = $1', [calendarConnection]);
    expect(await runRenew()).toMatchObject({ checked: 1, renewed: 1, failed: 0 });
    expect(await subscriptions(calendarConnection)).toHaveLength(1);

    // Marked due now (as the API marks one a provider ended: Graph's subscriptionRemoved): the
    // next pull remakes it, even a scheduled one, without waiting for the renewal job.
    const [ended] = await subscriptions(calendarConnection);
    await pool.query('UPDATE push_subscription SET expires_at = now() WHERE id = $1', [ended!.id]);
    await workers.jobs.enqueue('connection.pull', { connectionId: calendarConnection, reason: 'scheduled' });
    await pullsSettled();
    const remade = await subscriptions(calendarConnection);
    expect(remade).toHaveLength(1);
    expect(remade[0]!.id).not.toBe(ended!.id);
    expect(remade[0]!.expires_at.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
  });

  it('serves /metrics with pull counters, queue depths and dead letters', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/syncline_pull_changes_total\{provider="hubspot"\} \d+/);
    expect(text).toMatch(/syncline_connector_errors_total\{provider="hubspot",code="AuthRevoked"\} \d+/);
    expect(text).toMatch(
      /syncline_connector_errors_total\{provider="google-calendar",code="CursorInvalid"\} 1/,
    );
    expect(text).toMatch(/syncline_queue_jobs\{queue="pull",state="waiting"\} 0/);
    // Whatever else the workers dead-lettered meanwhile, the gauge is the open count.
    const open = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM dead_letter WHERE status = 'open'`,
    );
    expect(text).toContain(`syncline_dead_letters_open ${open.rows[0]!.n}`);
    expect(text).toContain(`syncline_backfill_seen{connection="${connectionB}"} 20`);
    expect(text).toMatch(
      new RegExp(`syncline_watermark_delay_seconds\\{connection="${connectionA}"\\} [\\d.]+`),
    );
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('connection.pull-all enqueues a pull of every pending, backfilling and live connection', async () => {
    const grant = await hubspotPortal(portalB);
    // In a workspace of its own (createConnection), so the same portal again.
    const pending = await createConnection('hubspot', String(portalB), oauth(grant));
    await pool.query(`UPDATE connection SET status = 'paused' WHERE id = $1`, [connectionB]);
    await workers.jobs.enqueue('connection.pull-all', {});
    await eventually(async () => expect((await row(pending)).status).toBe('live'));
    await pullsSettled();
    expect((await row(connectionB)).status).toBe('paused');
  });

  it("proves a connection stored before accounts were proven on its first pull; one with another account's credentials reads nothing", async () => {
    const proof = async (connectionId: string) =>
      (
        await pool.query<{ credentials_verified_at: Date | null; credentials_proof: string | null }>(
          'SELECT credentials_verified_at, credentials_proof FROM connection WHERE id = $1',
          [connectionId],
        )
      ).rows[0];
    const portalC = portalB + 1;
    const own = await createConnection('hubspot', String(portalC), oauth(await hubspotPortal(portalC)));
    // Claimed by the portal id alone, with credentials of another portal (what the API let in before).
    const claimed = await createConnection('hubspot', String(portalC), oauth(await hubspotPortal(portalB)));
    const user = await google<{ accessToken: string; refreshToken: string }>(
      'POST',
      '/_emulator/google/users',
      {
        email: googleEmail,
      },
    );
    const mailbox = await createConnection('gmail', `boss-${randomBytes(3).toString('hex')}@pull.example`, {
      ...user,
      expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
    });
    for (const id of [own, claimed, mailbox]) {
      expect(await proof(id)).toEqual({ credentials_verified_at: null, credentials_proof: null });
      await pull(id);
    }
    await eventually(async () => expect((await row(own)).status).toBe('live'));
    expect(await proof(own)).toEqual({
      credentials_verified_at: expect.any(Date),
      credentials_proof: 'hubspot_token_info',
    });
    for (const [id, account] of [
      [claimed, String(portalB)],
      [mailbox, googleEmail],
    ] as const) {
      const stopped = await eventually(async () => {
        const current = await row(id);
        expect(current.status).toBe('needs_reauth');
        return current;
      });
      expect(stopped.status_reason).toContain(`account ${account}, not`);
      expect(stopped.cursors).toEqual({});
      expect(await eventsOf(id)).toEqual([]);
      expect(await proof(id)).toEqual({ credentials_verified_at: null, credentials_proof: null });
    }
    await pullsSettled();
  });

  /** Runs connection.renew through the queue and returns its outcome. */
  async function runRenew(): Promise<unknown> {
    const connection = redis.duplicate({ maxRetriesPerRequest: null });
    const events = new QueueEvents('maintenance', { connection, prefix });
    try {
      await events.waitUntilReady();
      const completed = new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('connection.renew did not complete')), 30_000);
        events.on('completed', ({ jobId, returnvalue }) => {
          if (jobId !== 'connection.renew') return;
          clearTimeout(timer);
          resolve(typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue);
        });
      });
      await workers.jobs.enqueue('connection.renew', {});
      return await completed;
    } finally {
      await events.close();
      connection.disconnect();
    }
  }

  async function subscriptions(connectionId: string) {
    return (
      await pool.query<{
        id: string;
        workspace_id: string;
        resource_id: string | null;
        token_ciphertext: Buffer;
        token_key_id: string;
        expires_at: Date;
      }>('SELECT * FROM push_subscription WHERE connection_id = $1', [connectionId])
    ).rows;
  }
});
