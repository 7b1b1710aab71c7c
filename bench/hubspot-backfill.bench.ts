import { randomBytes, randomUUID } from 'node:crypto';
import {
  type ConnectionContext,
  type Cursor,
  hubspotBudgetLimits,
  hubspotConnector,
  RedisRateBudget,
  StaticTokenSource,
  unlimitedBudget,
} from '@syncline/connectors';
import { startEmulators } from '@syncline/emulators';
import { ChangeLog } from '@syncline/log';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { seedConnection } from '../test/support/fixtures';
import { emit, freshBenchDatabase, log } from './support';

const PER_10S = 190;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A HubSpot backfill of `records` contacts from the emulator through the official SDK.
 * 1. At HubSpot's 190 requests per 10 s, against the floor (list pages ÷ 19 per second):
 *    the budget should cost at most 10 % over the floor, with next to no 429s.
 * 2. With the emulator's limits and the budget off: the local cost of the same backfill,
 *    mapping every record and appending it to the change log in a fresh bench database.
 */
export async function run(args: { records?: number } = {}): Promise<void> {
  const records = args.records ?? 100_000;
  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  const base = emulators.hubspotUrl;
  const portalId = 9_100;
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  const grant = await control<{ accessToken: string }>('POST', '/_emulator/hubspot/portals', {
    portalId,
    appId: 5001,
    clientSecret: 'bench',
    limits: { per10s: PER_10S, searchPerSecond: 5, windowMs: 10_000 },
  });
  for (let left = records; left > 0; left -= 50_000)
    await control('POST', `/_emulator/hubspot/portals/${portalId}/seed/contacts`, {
      count: Math.min(left, 50_000),
    });
  log(`hubspot-backfill: ${records} contacts seeded`);

  const redis = new Redis(REDIS_URL);
  const prefix = `syncline-bench:hubspot-backfill-${randomBytes(4).toString('hex')}`;
  const context = (budgeted: boolean, connectionId: string, workspaceId: string): ConnectionContext => ({
    connectionId,
    workspaceId,
    externalAccountId: String(portalId),
    tokens: new StaticTokenSource(grant.accessToken),
    budget: budgeted
      ? new RedisRateBudget(redis, connectionId, hubspotBudgetLimits({ per10s: PER_10S }), prefix)
      : unlimitedBudget,
    endpoints: {
      hubspotBaseUrl: base,
      googleRootUrl: `${emulators.googleUrl}/`,
      googleTokenUrl: '',
      microsoftGraphUrl: emulators.microsoftUrl,
    },
  });

  try {
    // 1. Rate limited.
    log(`hubspot-backfill: limited run at ${PER_10S} per 10 s`);
    const limited = context(true, randomUUID(), randomUUID());
    const started = performance.now();
    let seen = 0;
    for (let cursor: Cursor = {}; ; ) {
      const page = await hubspotConnector.backfill(limited, cursor);
      if (!page.ok) throw new Error(`${page.error.code}: ${page.error.message}`);
      seen += page.value.changes.length;
      cursor = page.value.cursor;
      if (page.value.done) break;
    }
    const seconds = (performance.now() - started) / 1000;
    if (seen !== records) throw new Error(`backfill saw ${seen} records, expected ${records}`);
    const requests = await control<{ path: string; status: number }[]>(
      'GET',
      `/_emulator/requests?service=hubspot&account=${portalId}`,
    );
    const listCalls = requests.filter((r) => !r.path.includes('/search') && r.status < 400).length;
    const limitedCalls = requests.filter((r) => r.status === 429).length;
    const floor = listCalls / (PER_10S / 10);
    log(`hubspot-backfill: ${seconds.toFixed(1)} s, ${listCalls} list calls, ${limitedCalls} 429s`);

    // 2. Limits off: local cost of fetching, mapping and appending to the log.
    await control('PATCH', `/_emulator/hubspot/portals/${portalId}`, {
      limits: { per10s: 10_000_000, searchPerSecond: 1_000_000, windowMs: 10_000 },
    });
    const url = await freshBenchDatabase('syncline_bench_hubspot_backfill');
    const pool = new Pool({ connectionString: url, max: 8 });
    const conn = await seedConnection(pool, 'hubspot-bench');
    const changeLog = new ChangeLog(pool, { partitions: 16 });
    await changeLog.init();
    const local = context(false, conn.connectionId, conn.workspaceId);
    log('hubspot-backfill: local run (limits off, into the change log)');
    const localStarted = performance.now();
    // One page in flight while the previous one is appended, as a worker pipelines them.
    let pending: Promise<void> = Promise.resolve();
    for (let cursor: Cursor = {}; ; ) {
      const page = await hubspotConnector.backfill(local, cursor);
      if (!page.ok) throw new Error(`${page.error.code}: ${page.error.message}`);
      await pending;
      const changes = page.value.changes;
      pending = changes.length
        ? changeLog.append(changes).then((r) => {
            if (!r.ok) throw new Error(r.error.message);
          })
        : Promise.resolve();
      cursor = page.value.cursor;
      if (page.value.done) break;
    }
    await pending;
    await changeLog.drain();
    const localSeconds = (performance.now() - localStarted) / 1000;
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event');
    if (rows[0]!.n !== records) throw new Error(`log holds ${rows[0]!.n} events, expected ${records}`);
    await changeLog.close();
    await pool.end();

    emit({
      bench: 'hubspot-backfill',
      records,
      seconds: round(seconds),
      floor_seconds: round(floor),
      ratio_to_floor: round(seconds / floor, 3),
      rate_limited_share: round(limitedCalls / requests.length, 4),
      local_seconds: round(localSeconds),
    });
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await emulators.close();
  }
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));
