import { randomBytes, randomUUID } from 'node:crypto';
import {
  type ConnectionContext,
  type Connector,
  type Cursor,
  createMicrosoftCalendarConnector,
  createMicrosoftMailConnector,
  microsoftAccountId,
  microsoftBudgetLimits,
  type RateBudget,
  RedisRateBudget,
  StaticTokenSource,
  unlimitedBudget,
} from '@syncline/connectors';
import type { SourceChangeInput } from '@syncline/core';
import { startEmulators } from '@syncline/emulators';
import { APPEND_BATCH_ROWS, ChangeLog } from '@syncline/log';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { emit, freshBenchDatabase, log } from './support';

/** Outlook's limit per app and mailbox: requests per ten minutes (the emulator's default). */
const PER_TEN_MINUTES = 10_000;
const LIMIT_PER_SECOND = PER_TEN_MINUTES / 600;
/** The connectors' production page sizes (their defaults), for the request count foretold. */
const CALENDAR_PAGE = 100;
const MAIL_PAGE = 100;
const DAY_MS = 86_400_000;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const UPN = 'outlook-bench@contoso.example';
const SCOPES = ['openid', 'email', 'offline_access', 'User.Read', 'Calendars.ReadWrite', 'Mail.Read'];

/**
 * An Outlook backfill of one mailbox from the Microsoft emulator through the official SDK:
 * `records` split as a third calendar events and two thirds messages (three quarters of them
 * in the inbox, a quarter in Sent Items); by default 50,000 events and 100,000 messages.
 * 1. As production runs it: the calendar and mail connectors (default options) backfill the
 *    mailbox concurrently, as the workers run two connections of one mailbox, sharing one
 *    budget keyed on the mailbox (microsoftBudgetLimits), against the emulator's throttle (4 in
 *    flight, 10,000 requests per ten minutes per app and mailbox). The floor is the successful
 *    requests at the limit's rate (10,000 / 600 s); 429s come from the emulator's request log.
 *    `--latency-ms=N` answers every request of it N ms late (Graph's own time).
 * 2. With the throttle and the budget off: the local cost of the same backfill, mapping every
 *    record and appending it to the change log in a fresh bench database as the workers' pull
 *    does (pages held to appends of APPEND_BATCH_ROWS, each under way while the next page is
 *    read); every event and message must be there exactly once. `--throttled=0` runs this alone.
 */
export async function run(
  args: { records?: number; throttled?: number; latencyMs?: number } = {},
): Promise<void> {
  const records = args.records ?? 150_000;
  const events = Math.round(records / 3);
  const messages = records - events;
  const sent = Math.floor(messages / 4);
  const inbox = messages - sent;
  // Pages of the initial rounds, plus the mail connector's GET /me for the owner's address.
  const pages = (n: number, size: number) => Math.max(1, Math.ceil(n / size));
  const foretold = pages(events, CALENDAR_PAGE) + pages(inbox, MAIL_PAGE) + pages(sent, MAIL_PAGE) + 1;
  const budgetPerSecond = microsoftBudgetLimits({ perTenMinutes: PER_TEN_MINUTES }).default.points;
  log(
    `outlook-backfill: ${events} events, ${inbox} inbox and ${sent} sent messages: ${foretold} requests ` +
      `foretold (pages of ${CALENDAR_PAGE} events, ${MAIL_PAGE} messages); floor ${(foretold / LIMIT_PER_SECOND).toFixed(1)} s ` +
      `at ${LIMIT_PER_SECOND.toFixed(2)}/s, the budget's pace ${(foretold / budgetPerSecond).toFixed(1)} s at ${budgetPerSecond}/s`,
  );

  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  if (!process.env.NODE_EXTRA_CA_CERTS) {
    await emulators.close();
    throw new Error(
      `NODE_EXTRA_CA_CERTS must name the emulator's authority (${emulators.caFile}) as the process starts: run the bench through \`npm run bench\` (bench/bench.sh)`,
    );
  }
  const base = emulators.microsoftUrl;
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  const redis = new Redis(REDIS_URL);
  const prefix = `syncline-bench:outlook-backfill-${randomBytes(4).toString('hex')}`;

  try {
    const app = await control<{ clientId: string }>('POST', '/_emulator/microsoft/apps', {
      displayName: 'Syncline bench',
    });
    const user = await control<{ id: string; tenantId: string }>('POST', '/_emulator/microsoft/users', {
      userPrincipalName: UPN,
    });
    const grant = await control<{ accessToken: string }>('POST', `/_emulator/microsoft/users/${UPN}/grants`, {
      clientId: app.clientId,
      scopes: SCOPES,
    });
    const seedStarted = performance.now();
    // Inside both connectors' windows: the calendar view reaches a year back and two ahead,
    // the mail backfill a year of received dates.
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    for (let left = events; left > 0; left -= 100_000)
      await control('POST', `/_emulator/microsoft/users/${UPN}/seed/calendar`, {
        count: Math.min(left, 100_000),
        from: iso(now - 300 * DAY_MS),
        to: iso(now + 600 * DAY_MS),
      });
    log(`outlook-backfill: calendar seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const mailStarted = performance.now();
    for (const [folder, count] of [
      ['inbox', inbox],
      ['sentitems', sent],
    ] as const)
      for (let left = count; left > 0; left -= 100_000)
        await control('POST', `/_emulator/microsoft/users/${UPN}/seed/mail`, {
          count: Math.min(left, 100_000),
          folder,
          from: iso(now - 300 * DAY_MS),
        });
    log(`outlook-backfill: mail seeded in ${((performance.now() - mailStarted) / 1000).toFixed(1)} s`);

    const externalAccountId = microsoftAccountId(user.tenantId, user.id);
    const context = (budget: RateBudget, connectionId: string, workspaceId: string): ConnectionContext => ({
      connectionId,
      workspaceId,
      externalAccountId,
      tokens: new StaticTokenSource(grant.accessToken),
      budget,
      endpoints: {
        hubspotBaseUrl: emulators.hubspotUrl,
        googleRootUrl: `${emulators.googleUrl}/`,
        googleTokenUrl: '',
        microsoftGraphUrl: base,
      },
    });
    const calendar = createMicrosoftCalendarConnector();
    const mail = createMicrosoftMailConnector();

    // 1. Throttled, as production: one budget for the mailbox, keyed as the workers key it.
    // `--throttled=0` skips it (to profile the local run alone).
    // `--latency-ms=N`: every Graph request of it answered N ms late, as Graph's take 100-300 ms.
    const latencyMs = args.latencyMs ?? 0;
    const throttledRun = async () => {
      log(
        `outlook-backfill: throttled run, budget ${budgetPerSecond}/s shared by calendar and mail` +
          (latencyMs > 0 ? `, ${latencyMs} ms a request` : ''),
      );
      if (latencyMs > 0)
        await control('POST', '/_emulator/faults', { service: 'microsoft', kind: 'latency', ms: latencyMs });
      const budget = new RedisRateBudget(
        redis,
        `microsoft:${externalAccountId}`,
        microsoftBudgetLimits({ perTenMinutes: PER_TEN_MINUTES }),
        `${prefix}:budget`,
      );
      const workspaceId = randomUUID();
      const started = performance.now();
      const [calendarSeen, mailSeen] = await Promise.all([
        backfill(calendar, context(budget, randomUUID(), workspaceId)),
        backfill(mail, context(budget, randomUUID(), workspaceId)),
      ]);
      const seconds = (performance.now() - started) / 1000;
      expectEach('calendar', calendarSeen, events);
      expectEach('mail', mailSeen, messages);
      const requests = await control<{ path: string; status: number }[]>(
        'GET',
        `/_emulator/requests?service=microsoft&account=${encodeURIComponent(UPN)}`,
      );
      const succeeded = requests.filter((r) => r.status < 400).length;
      const throttled = requests.filter((r) => r.status === 429).length;
      const calendarCalls = requests.filter((r) => r.path.includes('/calendarView/delta')).length;
      const mailCalls = requests.filter((r) => r.path.includes('/messages/delta')).length;
      const floor = succeeded / LIMIT_PER_SECOND;
      log(
        `outlook-backfill: ${seconds.toFixed(1)} s; ${requests.length} requests (${calendarCalls} calendarView delta, ` +
          `${mailCalls} message delta, ${requests.length - calendarCalls - mailCalls} other), ${succeeded} ok, ${throttled} 429s; ` +
          `floor ${floor.toFixed(1)} s`,
      );
      if (latencyMs > 0) await control('DELETE', '/_emulator/faults');
      return { seconds, floor, throttled, requests: requests.length };
    };
    const limited = args.throttled === 0 ? undefined : await throttledRun();

    // 2. Limits off: the local cost of fetching, mapping and appending to the log.
    await control('POST', '/_emulator/microsoft/limits', {
      concurrent: 1_000_000,
      perTenMinutes: 1_000_000_000,
    });
    const url = await freshBenchDatabase('syncline_bench_outlook_backfill');
    const pool = new Pool({ connectionString: url, max: 8 });
    const local = { workspaceId: randomUUID(), calendarId: randomUUID(), mailId: randomUUID() };
    await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [
      local.workspaceId,
      'outlook-bench',
    ]);
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $3, 'microsoft-calendar', $4, 'live'), ($2, $3, 'microsoft-mail', $4, 'live')`,
      [local.calendarId, local.mailId, local.workspaceId, externalAccountId],
    );
    const changeLog = new ChangeLog(pool, { partitions: 16 });
    await changeLog.init();
    const append = async (changes: SourceChangeInput[]) => {
      const r = await changeLog.append(changes);
      if (!r.ok) throw new Error(r.error.message);
    };
    log('outlook-backfill: local run (limits off, into the change log)');
    const localStarted = performance.now();
    await Promise.all([
      backfill(calendar, context(unlimitedBudget, local.calendarId, local.workspaceId), append),
      backfill(mail, context(unlimitedBudget, local.mailId, local.workspaceId), append),
    ]);
    await changeLog.drain();
    const localSeconds = (performance.now() - localStarted) / 1000;
    const { rows } = await pool.query<{ connection_id: string; n: number; ids: number }>(
      `SELECT connection_id, count(*)::int AS n, count(DISTINCT external_id)::int AS ids
         FROM change_event GROUP BY connection_id`,
    );
    for (const [name, id, expected] of [
      ['calendar', local.calendarId, events],
      ['mail', local.mailId, messages],
    ] as const) {
      const row = rows.find((r) => r.connection_id === id);
      if (row?.n !== expected || row.ids !== expected)
        throw new Error(
          `the log holds ${row?.n ?? 0} ${name} events of ${row?.ids ?? 0} records, expected ${expected} of ${expected}`,
        );
    }
    log(
      `outlook-backfill: local ${localSeconds.toFixed(1)} s, ${events + messages} records in the log once each`,
    );
    await changeLog.close();
    await pool.end();

    emit({
      bench: 'outlook-backfill',
      records: events + messages,
      ...(limited
        ? {
            seconds: round(limited.seconds),
            floor_seconds: round(limited.floor),
            ratio_to_floor: round(limited.seconds / limited.floor, 3),
            throttled_share: round(limited.throttled / limited.requests, 4),
            ...(latencyMs > 0 ? { latency_ms: latencyMs } : {}),
          }
        : {}),
      local_seconds: round(localSeconds),
    });
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await emulators.close();
  }
}

/** What a backfill reported: changes, and the records (external ids) they were about. */
interface Seen {
  changes: number;
  ids: Set<string>;
}

/**
 * A connector's backfill to the end, as the workers' pull runs it (apps/workers pull.service.ts):
 * pages read one after another and held until they hold APPEND_BATCH_ROWS changes (or the
 * backfill ends), then handed to `sink` (the change log) in one append while the next page is
 * read; never two appends at once.
 */
async function backfill(
  connector: Connector,
  ctx: ConnectionContext,
  sink?: (changes: SourceChangeInput[]) => Promise<void>,
): Promise<Seen> {
  const seen: Seen = { changes: 0, ids: new Set() };
  let held: SourceChangeInput[] = [];
  let taking: Promise<void> | undefined;
  for (let cursor: Cursor = {}; ; ) {
    const [page] = await Promise.all([connector.backfill(ctx, cursor), taking]);
    taking = undefined;
    if (!page.ok) throw new Error(`${connector.provider}: ${page.error.code}: ${page.error.message}`);
    const { changes } = page.value;
    seen.changes += changes.length;
    for (const c of changes) {
      seen.ids.add(c.externalId);
      held.push(c);
    }
    cursor = page.value.cursor;
    if (sink && held.length > 0 && (page.value.done || held.length >= APPEND_BATCH_ROWS)) {
      taking = sink(held);
      held = [];
    }
    if (page.value.done) break;
  }
  await taking;
  return seen;
}

function expectEach(name: string, seen: Seen, expected: number): void {
  if (seen.changes !== expected || seen.ids.size !== expected)
    throw new Error(
      `${name} backfill reported ${seen.changes} changes of ${seen.ids.size} records, expected ${expected} of ${expected}`,
    );
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));
