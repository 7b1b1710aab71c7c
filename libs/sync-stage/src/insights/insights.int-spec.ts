import { randomUUID } from 'node:crypto';
import { ENTITY_CHANNEL } from '@syncline/core';
import { identityOperationChange } from '@syncline/identity';
import { Client, Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { contactEvent, type StageEvent, syncStage } from '../testing/sync-stage';
import { WATERMARK_RECORD } from './watermark-event';

/**
 * The activity insights as the real sync stage folds them, against real Postgres: panes from
 * mails and meetings in event time, the on-time trigger waiting for every connection's
 * watermark, a late mail revising a closed day, one beyond the lateness kept in the side
 * output, a cancelled meeting taken back, and the same results from a fold with other batches.
 */
let dbs: TestDatabase[] = [];
let pools: Pool[] = [];

const WS = '0190b000-0000-7000-8000-000000000001';
const CRM = '0190b000-0000-7000-8000-0000000000c1';
const GMAIL = '0190b000-0000-7000-8000-0000000000c2';
const CALENDAR = '0190b000-0000-7000-8000-0000000000c3';
const ME = 'me@syncline.example';

async function freshDatabase(name: string, { without = [] as string[] } = {}): Promise<Pool> {
  const db = await createTestDatabase(name);
  dbs.push(db);
  const pool = new Pool({ connectionString: db.url, max: 4 });
  pools.push(pool);
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [WS, 'insights']);
  for (const [id, provider] of [
    [CRM, 'hubspot'],
    [GMAIL, 'gmail'],
    [CALENDAR, 'google-calendar'],
  ] as const) {
    if (without.includes(id)) continue;
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, account_address)
       VALUES ($1, $2, $3::provider, $4, 'live', $5)`,
      [id, WS, provider, `acct-${id}`, provider === 'hubspot' ? null : ME],
    );
  }
  // A CRM in dry run: its changes and watermarks go to the staging log, so it holds nothing back.
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, dry_run)
     VALUES ('0190b000-0000-7000-8000-0000000000c4', $1, 'hubspot', 'acct-dry', 'live', true)`,
    [WS],
  );
  return pool;
}

beforeAll(async () => {
  dbs = [];
  pools = [];
});

afterAll(async () => {
  for (const pool of pools) await pool.end();
  for (const db of dbs) await db.drop();
});

const iso = (s: string) => new Date(s);

const mail = (id: string, sentAt: string, fields: Record<string, unknown>, version = 1): StageEvent => ({
  workspaceId: WS,
  connectionId: GMAIL,
  entityType: 'email_activity',
  externalId: id,
  op: 'upsert',
  eventKey: `messages:${id}:${version}`,
  fields: { sentAt, subject: `mail ${id}`, ...fields },
  fieldTimes: {},
  eventTime: iso(sentAt),
  origin: null,
});

const meeting = (
  id: string,
  startAt: string,
  fields: Record<string, unknown> = {},
  version = 1,
): StageEvent => ({
  workspaceId: WS,
  connectionId: CALENDAR,
  entityType: 'meeting',
  externalId: id,
  op: 'upsert',
  eventKey: `events:${id}:${version}`,
  fields: {
    iCalUID: `${id}@google.com`,
    title: `meeting ${id}`,
    startAt,
    organizer: ME,
    attendees: [ME, 'ada@analytical.example', 'bea@analytical.example'],
    status: 'confirmed',
    ...fields,
  },
  fieldTimes: {},
  eventTime: iso(startAt),
  origin: null,
});

const watermark = (connectionId: string, at: string): StageEvent[] =>
  (connectionId === CALENDAR
    ? ['meeting']
    : connectionId === GMAIL
      ? ['email_activity']
      : ['email_activity', 'meeting']
  ).map((entityType) => ({
    workspaceId: WS,
    connectionId,
    entityType: entityType as StageEvent['entityType'],
    externalId: WATERMARK_RECORD,
    op: 'watermark' as const,
    eventKey: `watermark:${entityType}:${Date.parse(at)}`,
    fields: {},
    fieldTimes: {},
    eventTime: iso(at),
    origin: null,
  }));

const everyone = (at: string) => [...watermark(CRM, at), ...watermark(GMAIL, at), ...watermark(CALENDAR, at)];

const ada = contactEvent(WS, CRM, 'c-ada', iso('2026-11-01T00:00:00Z'), {
  email: 'ada@analytical.example',
  firstName: 'Ada',
});
// Ada and Bea work at Analytical (derived from their addresses' domain): the company counts a
// meeting they both attended once.
const analytical: StageEvent = {
  ...contactEvent(WS, CRM, 'co-analytical', iso('2026-11-01T00:00:00Z'), {
    name: 'Analytical Engines',
    domain: 'analytical.example',
  }),
  entityType: 'company',
  eventKey: 'companies:co-analytical:1',
};
const bea = contactEvent(WS, CRM, 'c-bea', iso('2026-11-01T00:00:00Z'), {
  email: 'bea@analytical.example',
  firstName: 'Bea',
});
const fromAda = mail('m-1', '2026-11-20T10:00:00.000Z', {
  direction: 'inbound',
  from: 'ada@analytical.example',
  to: [ME],
  threadId: 'thread-1',
});
const roadmap = meeting('evt-1', '2026-11-20T14:00:00.000Z');
const nextWeek = meeting('evt-2', '2026-12-10T09:00:00.000Z');
const reply = mail('m-2', '2026-11-20T16:00:00.000Z', {
  direction: 'outbound',
  from: ME,
  to: ['ada@analytical.example'],
  threadId: 'thread-1',
});
const cancelled = meeting('evt-2', '2026-12-10T09:00:00.000Z', { status: 'cancelled' }, 2);
const ancient = mail('m-3', '2026-11-10T08:00:00.000Z', {
  direction: 'inbound',
  from: 'ada@analytical.example',
  to: [ME],
});

/** The whole history, in log order, cut into the batches the live consumer met. */
const BATCHES: StageEvent[][] = [
  [analytical, ada, bea, fromAda, roadmap, nextWeek],
  // Only two of the three connections vouch for 21 November: the day waits for the calendar.
  [...watermark(CRM, '2026-11-21T00:05:00Z'), ...watermark(GMAIL, '2026-11-21T00:05:00Z')],
  watermark(CALENDAR, '2026-11-21T00:05:00Z'),
  [reply],
  [cancelled],
  everyone('2026-11-30T00:05:00Z'),
  [ancient],
];

interface Pane {
  window_end: string;
  trigger: string;
  metrics: Record<string, unknown>;
}

const adaId = async (pool: Pool): Promise<string> =>
  (
    await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'c-ada'`,
      [CRM],
    )
  ).rows[0]!.entity_id;

const panesOf = async (pool: Pool, personId: string): Promise<Pane[]> =>
  (
    await pool.query<Pane>(
      `SELECT window_end::text AS window_end, trigger, metrics FROM insight_pane
        WHERE entity_id = $1 ORDER BY window_end`,
      [personId],
    )
  ).rows;

const stateOf = async (pool: Pool) =>
  (
    await pool.query<{ watermark: Date | null; late: number; side_output: number }>(
      'SELECT watermark, late, side_output FROM insights_state WHERE workspace_id = $1',
      [WS],
    )
  ).rows[0];

/** Every result row, as text: what a fold from zero must reproduce byte for byte. */
const results = async (pool: Pool): Promise<string[]> =>
  (
    await pool.query<{ row: string }>(
      `SELECT to_jsonb(p)::text AS row FROM insight_pane p WHERE workspace_id = $1
       UNION ALL SELECT to_jsonb(c)::text FROM activity_contribution c WHERE workspace_id = $1
       UNION ALL SELECT (to_jsonb(s) - 'id')::text FROM insights_side_output s WHERE workspace_id = $1
       ORDER BY 1`,
      [WS],
    )
  ).rows.map((r) => r.row);

describe('activity insights in the sync stage', () => {
  it('count mails and meetings in event time, wait for every watermark, revise late, set aside too late', async () => {
    const pool = await freshDatabase('insights_live');
    const stage = syncStage(pool);
    const [first, twoOfThree, calendarToo, late, cancel, weekLater, tooLate] = BATCHES as [
      StageEvent[],
      StageEvent[],
      StageEvent[],
      StageEvent[],
      StageEvent[],
      StageEvent[],
      StageEvent[],
    ];

    await stage.handle(...first);
    const person = await adaId(pool);
    const contributions = await pool.query<{ kind: string; event_time: Date }>(
      'SELECT kind, event_time FROM activity_contribution WHERE entity_id = $1 ORDER BY event_time',
      [person],
    );
    expect(contributions.rows.map((r) => [r.kind, r.event_time.toISOString()])).toEqual([
      ['mail_in', '2026-11-20T10:00:00.000Z'],
      ['meeting', '2026-11-20T14:00:00.000Z'],
      ['meeting', '2026-12-10T09:00:00.000Z'],
    ]);
    // Our own address counts for nothing, though a person was made for it.
    const mine = await pool.query(
      `SELECT 1 FROM activity_contribution c JOIN match_key m ON m.entity_id = c.entity_id
        WHERE m.kind = 'email' AND m.value = $1`,
      [ME],
    );
    expect(mine.rowCount).toBe(0);
    // No watermark yet: no day is complete, and no pane is shown as if it were.
    expect(await panesOf(pool, person)).toEqual([]);

    await stage.handle(...twoOfThree);
    expect(await panesOf(pool, person)).toEqual([]);
    const held = await pool.query<{ held_by: unknown }>(
      'SELECT held_by FROM insights_state WHERE workspace_id = $1',
      [WS],
    );
    expect(held.rows[0]?.held_by).toEqual([{ connectionId: CALENDAR, watermark: null }]);

    // The day closing moves Ada's results though no record of hers changed: she is announced,
    // so the pages streaming her read her insights again.
    const listener = new Client({ connectionString: dbs[0]!.url });
    await listener.connect();
    const announced: { id: string; type: string }[] = [];
    listener.on('notification', (n) => announced.push(JSON.parse(n.payload ?? '{}')));
    await listener.query(`LISTEN ${ENTITY_CHANNEL}`);
    await stage.handle(...calendarToo);
    await expect.poll(() => announced.filter((a) => a.id === person).map((a) => a.type)).toEqual(['person']);
    await listener.end();
    expect((await stateOf(pool))?.watermark?.toISOString()).toBe('2026-11-21T00:05:00.000Z');
    const onTime = await panesOf(pool, person);
    expect(onTime).toEqual([
      {
        window_end: '2026-11-20',
        trigger: 'on_time',
        metrics: expect.objectContaining({
          last7: { mailsIn: 1, mailsOut: 0, meetings: 1 },
          lastContactedAt: Date.parse('2026-11-20T14:00:00Z'),
          lastContactedVia: 'meeting',
          lastInboundAt: Date.parse('2026-11-20T10:00:00Z'),
          lastOutboundAt: null,
          trend: 'warming',
        }),
      },
    ]);

    // Our reply, read after the day closed but within the lateness: the day's pane is revised.
    await stage.handle(...late);
    const revised = (await panesOf(pool, person)).find((p) => p.window_end === '2026-11-20');
    expect(revised?.trigger).toBe('late');
    expect(revised?.metrics).toMatchObject({
      last7: { mailsIn: 1, mailsOut: 1, meetings: 1 },
      lastOutboundAt: Date.parse('2026-11-20T16:00:00Z'),
      lastContactedVia: 'mail_out',
      replies90: 1,
      medianReplyMs90: 6 * 3_600_000,
    });
    expect((await stateOf(pool))?.late).toBeGreaterThan(0);

    // The meeting next week is cancelled: it no longer counts for her.
    await stage.handle(...cancel);
    const ahead = await pool.query(
      `SELECT 1 FROM activity_contribution WHERE entity_id = $1 AND kind = 'meeting' AND event_time > '2026-12-01'`,
      [person],
    );
    expect(ahead.rowCount).toBe(0);

    // The company counts over its people: Ada's mail and the meeting she and Bea attended, once.
    const company = (
      await pool.query<{ entity_id: string }>(
        `SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'co-analytical'`,
        [CRM],
      )
    ).rows[0]!.entity_id;
    expect((await panesOf(pool, company)).find((p) => p.window_end === '2026-11-20')?.metrics).toMatchObject({
      last7: { mailsIn: 1, mailsOut: 1, meetings: 1 },
      lastContactedVia: 'mail_out',
    });

    // A week on, a mail from the 10th arrives: beyond the lateness, set aside and counted.
    await stage.handle(...weekLater);
    const before = await panesOf(pool, person);
    await stage.handle(...tooLate);
    expect(await panesOf(pool, person)).toEqual(before);
    // Aside for her and for her company, each counted.
    expect((await stateOf(pool))?.side_output).toBe(2);
    const aside = await pool.query<{ entity_id: string; reason: string; event_time: Date }>(
      'SELECT entity_id, reason, event_time FROM insights_side_output WHERE workspace_id = $1 ORDER BY entity_id',
      [WS],
    );
    expect(aside.rows).toEqual(
      [person, company].sort().map((id) => ({
        entity_id: id,
        reason: 'beyond_allowed_lateness',
        event_time: iso('2026-11-10T08:00:00Z'),
      })),
    );
  });

  it('are the same, row for row, when the log is folded from zero in other batches', async () => {
    const live = pools[0]!;
    const all = BATCHES.flat();
    const oneByOne = syncStage(await freshDatabase('insights_one_by_one'));
    for (const event of all) await oneByOne.handle(event);
    const atOnce = syncStage(await freshDatabase('insights_at_once'));
    // Batches end where a watermark ends them (the stage takes each alone), else at once.
    await atOnce.handle(...all);
    const expected = await results(live);
    expect(expected.length).toBeGreaterThan(5);
    expect(await results(pools[1]!)).toEqual(expected);
    expect(await results(pools[2]!)).toEqual(expected);
  });

  it('a mailbox connected after the days closed: its history is set aside, then counted once it has vouched', async () => {
    const pool = await freshDatabase('insights_late_mailbox', { without: [GMAIL] });
    const stage = syncStage(pool);
    await stage.handle(ada, roadmap);
    await stage.handle(
      ...watermark(CRM, '2026-11-30T00:05:00Z'),
      ...watermark(CALENDAR, '2026-11-30T00:05:00Z'),
    );
    const person = await adaId(pool);
    const day = async () => (await panesOf(pool, person)).find((p) => p.window_end === '2026-11-20')?.metrics;
    expect(await day()).toMatchObject({ last7: { mailsIn: 0, meetings: 1 }, lastInboundAt: null });

    // Gmail is connected now; its backfill brings her mail of the 20th, a day closed for good.
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, account_address)
       VALUES ($1, $2, 'gmail', 'acct-gmail', 'backfilling', $3)`,
      [GMAIL, WS, ME],
    );
    await stage.handle(fromAda);
    expect((await stateOf(pool))?.side_output).toBe(1);
    expect(await day()).toMatchObject({ last7: { mailsIn: 0, meetings: 1 }, lastInboundAt: null });

    // Its backfill done, Gmail vouches: every connection has, and the windows are folded again.
    await stage.handle(...watermark(GMAIL, '2026-11-30T00:05:00Z'));
    expect(await day()).toMatchObject({
      last7: { mailsIn: 1, mailsOut: 0, meetings: 1 },
      lastInboundAt: Date.parse('2026-11-20T10:00:00Z'),
    });
    expect((await stateOf(pool))?.watermark?.toISOString()).toBe('2026-11-30T00:05:00.000Z');
  });

  it('a merge moves the absorbed person’s history to the survivor, none of it late', async () => {
    const pool = await freshDatabase('insights_merge');
    const own = '0190b000-0000-7000-8000-0000000000c5';
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, 'syncline', 'own', 'live')`,
      [own, WS],
    );
    const stage = syncStage(pool);
    const countess = contactEvent(WS, CRM, 'c-countess', iso('2026-11-01T00:00:00Z'), {
      email: 'countess@lovelace.example',
      firstName: 'Augusta',
    });
    const fromCountess = mail('m-c', '2026-11-20T10:00:00.000Z', {
      direction: 'inbound',
      from: 'countess@lovelace.example',
      to: [ME],
    });
    const fromAdaLater = mail('m-a', '2026-11-28T10:00:00.000Z', {
      direction: 'inbound',
      from: 'ada@analytical.example',
      to: [ME],
    });
    await stage.handle(ada, countess, fromCountess, fromAdaLater);
    await stage.handle(...everyone('2026-11-30T00:05:00Z'));
    const person = await adaId(pool);
    const absorbed = (
      await pool.query<{ entity_id: string }>(
        `SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'c-countess'`,
        [CRM],
      )
    ).rows[0]!.entity_id;
    const current = async (id: string) => (await panesOf(pool, id)).at(-1)?.metrics;
    expect(await current(person)).toMatchObject({
      last30: { mailsIn: 1 },
      lastInboundAt: Date.parse('2026-11-28T10:00:00Z'),
    });

    // Someone merges the two: the countess's mail of the 20th, a day closed for good, is Ada's now.
    const change = identityOperationChange(
      {
        kind: 'merge',
        operationId: randomUUID(),
        workspaceId: WS,
        entityType: 'person',
        survivorId: person,
        absorbedId: absorbed,
      },
      own,
      iso('2026-11-30T12:00:00Z'),
    );
    await stage.handle({
      ...change,
      eventTime: iso('2026-11-30T12:00:00Z'),
      fields: change.fields ?? {},
      fieldTimes: {},
      origin: null,
    });
    expect(await current(person)).toMatchObject({ last30: { mailsIn: 2 }, last90: { mailsIn: 2 } });
    expect((await stateOf(pool))?.side_output).toBe(0);
    const moved = await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM activity_contribution WHERE activity_id IN
         (SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'm-c')`,
      [GMAIL],
    );
    expect(moved.rows.map((r) => r.entity_id)).toContain(person);
    expect(moved.rows.map((r) => r.entity_id)).not.toContain(absorbed);
  });
});
