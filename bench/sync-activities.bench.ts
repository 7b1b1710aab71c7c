import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { type EntityType, inTransaction } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import type { LogEvent } from '@syncline/log';
import { SyncStage } from '@syncline/sync-stage';
import { Pool } from 'pg';
import { cpuBetween, cpuSeconds } from './cpu-accounting';
import { emit, freshBenchDatabase, log } from './support';

/**
 * sync-activities: what the sync stage costs per mail and meeting, everything it does for one
 * included (identity of the parties, the merge, the view, the associations, and where the
 * stage has them, the activity insights). `people` HubSpot contacts are folded first; then
 * `activities` mails (two in three) and meetings with one or two of them each, over `days`
 * days, in batches of `batch` as the consumer hands them over, through the real SyncStage in
 * one transaction per batch. With `--watermarks=1` each day's end is vouched for by every
 * connection (events of op `watermark`, for a stage that knows them), so the windows close
 * day by day as they would live. Prints activities/s of the activity fold.
 */
export async function run(args: Record<string, number>): Promise<void> {
  const people = args.people ?? 2_000;
  const activities = args.activities ?? 20_000;
  const days = args.days ?? 60;
  const batchSize = args.batch ?? 200;
  const watermarks = (args.watermarks ?? 1) === 1;
  const url = await freshBenchDatabase('syncline_bench_sync_activities');
  const pool = new Pool({ connectionString: url, max: 4 });
  try {
    const ws = randomUUID();
    const conn = { crm: randomUUID(), gmail: randomUUID(), calendar: randomUUID() };
    await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [ws, 'bench']);
    for (const [key, provider] of [
      ['crm', 'hubspot'],
      ['gmail', 'gmail'],
      ['calendar', 'google-calendar'],
    ] as const)
      await pool.query(
        `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, account_address)
         VALUES ($1, $2, $3::provider, $4, 'live', $5)`,
        [conn[key], ws, provider, `acct-${key}`, provider === 'hubspot' ? null : 'me@bench.example'],
      );
    const stage = new SyncStage({
      identity: new IdentityService(),
      engine: new MergeEngine(new PgMergeStore(pool)),
    });
    let offset = 0;
    const event = (
      connectionId: string,
      entityType: EntityType,
      externalId: string,
      op: LogEvent['op'],
      eventTime: Date,
      fields: Record<string, unknown>,
    ): LogEvent => ({
      partition: 0,
      offset: ++offset,
      workspaceId: ws,
      connectionId,
      eventKey: `${entityType}:${externalId}:${op}:${eventTime.getTime()}`,
      entityType,
      externalId,
      op,
      fields,
      fieldTimes: {},
      eventTime,
      ingestedAt: new Date(),
      providerVersion: null,
      origin: null,
    });
    // The workers keep the planner's statistics current (TableStatisticsService, every 10 s):
    // without them identity's match-key lookup reads every key of the workspace per batch.
    const fold = async (events: LogEvent[]) => {
      for (let at = 0; at < events.length; at += batchSize) {
        if ((at / batchSize) % 20 === 0) await pool.query('ANALYZE');
        await inTransaction(pool, (client) => stage.handle(client, events.slice(at, at + batchSize)));
      }
    };
    const T0 = Date.parse('2026-09-01T00:00:00Z');
    const address = (i: number) => `person${i}@customer${i % 97}.example`;
    log(`sync-activities: ${people} contacts`);
    await fold(
      Array.from({ length: people }, (_, i) =>
        event(conn.crm, 'person', `c-${i}`, 'upsert', new Date(T0), {
          email: address(i),
          firstName: `Person ${i}`,
        }),
      ),
    );
    // Activities in day order, a few minutes apart, each day closed by every connection's watermark.
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed;
    };
    const events: LogEvent[] = [];
    const perDay = Math.ceil(activities / days);
    for (let i = 0; i < activities; i++) {
      const day = Math.floor(i / perDay);
      const at = new Date(T0 + day * 86_400_000 + (i % perDay) * 60_000);
      const who = address(next() % people);
      if (i % 3 === 2)
        events.push(
          event(conn.calendar, 'meeting', `evt-${i}`, 'upsert', at, {
            iCalUID: `evt-${i}@bench`,
            title: `Meeting ${i}`,
            startAt: at.toISOString(),
            organizer: 'me@bench.example',
            attendees: ['me@bench.example', who, address(next() % people)],
          }),
        );
      else {
        const inbound = i % 2 === 0;
        events.push(
          event(conn.gmail, 'email_activity', `m-${i}`, 'upsert', at, {
            sentAt: at.toISOString(),
            subject: `Mail ${i}`,
            direction: inbound ? 'inbound' : 'outbound',
            from: inbound ? who : 'me@bench.example',
            to: inbound ? ['me@bench.example'] : [who],
            threadId: `th-${next() % (people * 2)}`,
          }),
        );
      }
      const endOfDay = (i + 1) % perDay === 0 || i === activities - 1;
      if (watermarks && endOfDay) {
        const mark = new Date(T0 + (day + 1) * 86_400_000 + 300_000);
        for (const [connectionId, types] of [
          [conn.crm, ['email_activity', 'meeting']],
          [conn.gmail, ['email_activity']],
          [conn.calendar, ['meeting']],
        ] as const)
          for (const type of types)
            events.push(event(connectionId, type, 'watermark', 'watermark' as LogEvent['op'], mark, {}));
      }
    }
    await pool.query('ANALYZE');
    log(`sync-activities: ${activities} activities over ${days} days in batches of ${batchSize}`);
    const cpu = cpuSeconds({});
    const started = performance.now();
    await fold(events);
    const seconds = (performance.now() - started) / 1000;
    const panes = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'insight_pane'`,
    );
    const paneRows =
      panes.rows[0]!.n > 0
        ? (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM insight_pane')).rows[0]!.n
        : null;
    emit({
      bench: 'sync-activities',
      people,
      activities,
      days,
      batch: batchSize,
      watermarks,
      seconds: Math.round(seconds * 10) / 10,
      activities_per_s: Math.round(activities / seconds),
      cpu_s: cpuBetween(cpu, cpuSeconds({})),
      insight_panes: paneRows,
    });
  } finally {
    await pool.end();
  }
}
