import type { Pool } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchBrowser } from '../e2e/support/chromium';
import { emit, log, percentile } from './support';
import { startWebBenchStack } from './web-stack';

/**
 * `web-admin`: in headless Chromium (one signed-in admin, warm cache), from navigation to the
 * content on screen, on a workspace of 200 connections (inserted as rows: live, backfilling,
 * paused, failing; they never sync) with 24 hours of health samples each at the default
 * interval (a minute): `/admin/connections` until its last connection's row is shown,
 * `/admin/health` until its first cards and its charts' lines and bars are drawn. Times are
 * the browser's own (the frame that shows it, from the navigation's start). The API process
 * serves the built app (`npm run web:build`).
 */

const PREFIX = 'syncline-bench-web-admin';
const SAMPLE_MS = 60_000;

const STATUSES = ['live', 'live', 'live', 'live', 'backfilling', 'paused', 'error', 'needs_reauth'] as const;
const PROVIDERS = ['hubspot', 'google-calendar', 'gmail', 'google-tasks'] as const;

/** 200 connections of the workspace, of every status, each with 24 hours of minute samples. */
async function seed(pool: Pool, workspaceId: string, connections: number, hours: number): Promise<void> {
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, display_name, status,
                             last_error_code, watermark, backfill_seen, backfill_total, credentials_verified_at,
                             credentials_ciphertext, credentials_key_id)
     SELECT gen_random_uuid(), $1::uuid, ($2::text[])[1 + i % 4]::provider, 'account-' || i, 'Bench ' || i,
            ($3::text[])[1 + i % 8]::connection_status,
            CASE WHEN i % 8 = 6 THEN 'Transient' WHEN i % 8 = 7 THEN 'AuthRevoked' END,
            now() - (i % 30) * interval '1 minute', 100 * i, CASE WHEN i % 2 = 0 THEN 100 * i + 500 END, now(),
            -- Credentials are never opened here (nothing syncs): any bytes stand for them.
            '\\x00'::bytea, 'k1'
       FROM generate_series(1, $4::int) AS i`,
    [workspaceId, [...PROVIDERS], [...STATUSES], connections],
  );
  const start = Math.floor((Date.now() - hours * 3_600_000) / SAMPLE_MS) * SAMPLE_MS;
  // Samples at the default interval: lag and delay that wander, writes every minute, a few refused.
  await pool.query(
    `INSERT INTO sync_health_sample (workspace_id, sampled_at, connection_id, status, lag_events,
                                     watermark_delay_seconds, backfill_seen, backfill_total, pending_writes,
                                     writes_ok, writes_failed, dead_letters_open, consumer_lag)
     SELECT $1::uuid, t, c.id, c.status::text, (abs(hashint4(m + c.n)) % 50)::int,
            (abs(hashint4(m * 7 + c.n)) % 600)::int, c.backfill_seen, c.backfill_total,
            (abs(hashint4(m * 3 + c.n)) % 20)::int, (abs(hashint4(m * 5 + c.n)) % 10)::int,
            CASE WHEN (m + c.n) % 97 = 0 THEN '{"ValidationFailed": 1}'::jsonb
                 WHEN (m + c.n) % 131 = 0 THEN '{"NotFound": 1}'::jsonb ELSE '{}'::jsonb END,
            3, (abs(hashint4(m)) % 500)::int
       FROM (SELECT id, status, backfill_seen, backfill_total, row_number() OVER (ORDER BY id)::int AS n
               FROM connection WHERE workspace_id = $1::uuid AND provider <> 'syncline') AS c,
            generate_series(0, $3::int - 1) AS m,
            LATERAL (SELECT to_timestamp(($2::bigint + m::bigint * ${SAMPLE_MS}) / 1000.0) AS t) AS at`,
    [workspaceId, start, (hours * 3_600_000) / SAMPLE_MS],
  );
  await pool.query('ANALYZE connection; ANALYZE sync_health_sample');
}

/** What the page shows when it is ready, checked in the page on every frame; the time of that frame, else null. */
type Ready = (n: number) => number | null;

/**
 * ms from navigation until `ready` holds, on the browser's own clock. `ready` is handed to the
 * page as a function (the app's CSP forbids eval), so it names everything it uses inside.
 */
async function load(page: Page, path: string, ready: Ready, n: number): Promise<number> {
  await page.goto(path, { waitUntil: 'commit' });
  try {
    const shown = await page.waitForFunction(ready, n, { polling: 'raf', timeout: 60_000 });
    return (await shown.jsonValue()) as number;
  } catch (error) {
    // Say what was on screen instead: which part never came.
    const seen = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } })
        .document;
      const count = (s: string) => doc.querySelectorAll(s).length;
      return {
        rows: count('[data-connection-id]'),
        cards: count('[data-health-card]'),
        charts: count('[data-chart]'),
        lines: count('.recharts-line-curve'),
        bars: count('.recharts-bar-rectangle'),
        alerts: count('[role="alert"]'),
      };
    });
    throw new Error(`${path} not shown in 60 s: ${JSON.stringify(seen)}`, { cause: error });
  }
}

/** Every connection's row on the connections page. */
const connectionsShown: Ready = (n) => {
  const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } })
    .document;
  return doc.querySelectorAll('[data-connection-id]').length >= n ? performance.now() : null;
};

/** The health page's first cards, and its three charts with their lines or bars drawn. */
const healthShown: Ready = (n) => {
  const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } })
    .document;
  const drawn =
    // The page opens on the 12 connections that most need attention ("Show all" for the rest).
    doc.querySelectorAll('[data-health-card]').length >= Math.min(n, 12) &&
    doc.querySelectorAll('[data-chart="chart-consumer-lag"] .recharts-line-curve').length > 0 &&
    doc.querySelectorAll('[data-chart="chart-connection-lag"] .recharts-line-curve').length > 0 &&
    doc.querySelectorAll('[data-chart="chart-writes"] .recharts-bar-rectangle').length > 0;
  return drawn ? performance.now() : null;
};

export async function run(args: Record<string, number>): Promise<void> {
  const connections = args.connections ?? 200;
  const hours = args.hours ?? 24;
  const loads = args.loads ?? 20;
  const stack = await startWebBenchStack({
    database: 'syncline_bench_web_admin',
    redisPrefix: PREFIX,
    seed: async (pool, workspaceId) => {
      const seedStart = Date.now();
      await seed(pool, workspaceId, connections, hours);
      const { rows } = await pool.query<{ n: string }>('SELECT count(*)::text AS n FROM sync_health_sample');
      log(
        `seeded ${connections} connections, ${rows[0]?.n} samples in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
      );
    },
  });
  const { api, signInUrl: url } = stack;

  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const context = await browser.newContext({ baseURL: api, viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'), { timeout: 30_000 });

    const pages = [
      { key: 'connections', path: '/admin/connections', ready: connectionsShown },
      { key: 'health', path: '/admin/health', ready: healthShown },
    ] as const;
    const times: Record<string, number[]> = { connections: [], health: [] };
    // Warm up the API and the browser's cache, then alternate the pages.
    for (const p of pages) for (let i = 0; i < 3; i++) await load(page, p.path, p.ready, connections);
    for (let i = 0; i < loads; i++)
      for (const p of pages) times[p.key]!.push(await load(page, p.path, p.ready, connections));
    for (const list of Object.values(times)) list.sort((a, b) => a - b);
    const round = (n: number) => Math.round(n);
    emit({
      bench: 'web-admin',
      connections,
      history_hours: hours,
      loads,
      connections_p95_ms: round(percentile(times.connections!, 95)),
      connections_p50_ms: round(percentile(times.connections!, 50)),
      health_p95_ms: round(percentile(times.health!, 95)),
      health_p50_ms: round(percentile(times.health!, 50)),
      target_p95_ms: 1_000,
    });
  } finally {
    await browser?.close();
    stack.stop();
  }
}
