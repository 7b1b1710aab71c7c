import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { contactEvent, type StageEvent, seedConnections, syncStage } from '../testing/sync-stage';
import { INSIGHT_WRITE_PERIOD_MS } from './entity-insights';
import { timeZoneChangeInput } from './time-zone-event';
import { watermarkChanges } from './watermark-event';

/**
 * A record's current insights (`entity_insight`) and the CRM writes they owe, as the real sync
 * stage folds them against real Postgres: the latest result and the next meeting at the log's
 * time, one pending write per record and CRM carrying the latest values, the period after the
 * last write sent, nothing owed when nothing moved, and the same rows from a fold of the log
 * in one batch.
 */
const ME = 'me@syncline.example';
const ADA = 'ada@analytical.example';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('entity_insights');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

async function workspace() {
  const ids = await seedConnections(pool, { crm: 'hubspot', gmail: 'gmail', calendar: 'google-calendar' });
  await pool.query('UPDATE connection SET account_address = $2 WHERE id = ANY($1::uuid[])', [
    [ids.gmail, ids.calendar],
    ME,
  ]);
  return ids;
}

type Ids = Awaited<ReturnType<typeof workspace>>;

const mail = (ids: Ids, id: string, sentAt: string, direction: 'inbound' | 'outbound'): StageEvent => ({
  workspaceId: ids.workspaceId,
  connectionId: ids.gmail,
  entityType: 'email_activity',
  externalId: id,
  op: 'upsert',
  eventKey: `messages:${id}`,
  fields: {
    sentAt,
    subject: `mail ${id}`,
    direction,
    from: direction === 'inbound' ? ADA : ME,
    to: [direction === 'inbound' ? ME : ADA],
    threadId: 'thread-1',
  },
  fieldTimes: {},
  eventTime: new Date(sentAt),
  origin: null,
});

const meeting = (ids: Ids, id: string, startAt: string, status = 'confirmed', version = 1): StageEvent => ({
  workspaceId: ids.workspaceId,
  connectionId: ids.calendar,
  entityType: 'meeting',
  externalId: id,
  op: 'upsert',
  eventKey: `events:${id}:${version}`,
  fields: {
    iCalUID: `${id}@google.com`,
    title: `meeting ${id}`,
    startAt,
    organizer: ME,
    attendees: [ME, ADA],
    status,
  },
  fieldTimes: {},
  eventTime: new Date(startAt),
  origin: null,
});

/** Every connection vouches for what came before 09:55 on 5 December: the days before it close. */
const marks = (ids: Ids): StageEvent[] =>
  (
    [
      [ids.crm, 'hubspot'],
      [ids.gmail, 'gmail'],
      [ids.calendar, 'google-calendar'],
    ] as const
  ).flatMap(([id, provider]) =>
    watermarkChanges({ id, workspaceId: ids.workspaceId, provider }, new Date('2026-12-05T09:55:00Z')).map(
      (c) => ({ ...c, fields: {}, fieldTimes: {}, eventTime: new Date(c.eventTime), origin: null }),
    ),
  );

const history = (ids: Ids) => {
  const ada = contactEvent(ids.workspaceId, ids.crm, 'c-ada', new Date('2026-11-01T00:00:00Z'), {
    email: ADA,
    firstName: 'Ada',
  });
  return {
    first: [
      ...marks(ids),
      ada,
      mail(ids, 'm-1', '2026-12-04T10:00:00.000Z', 'inbound'),
      meeting(ids, 'evt-1', '2026-12-10T09:00:00.000Z'),
    ],
    reply: [mail(ids, 'm-2', '2026-12-05T09:00:00.000Z', 'outbound')],
    soon: [meeting(ids, 'evt-2', '2026-12-05T11:00:00.000Z')],
    cancel: [meeting(ids, 'evt-1', '2026-12-10T09:00:00.000Z', 'cancelled', 2)],
    phone: [
      contactEvent(ids.workspaceId, ids.crm, 'c-ada', new Date('2026-12-05T10:00:00Z'), {
        email: ADA,
        firstName: 'Ada',
        phone: '+44 20 7946 0000',
      }),
    ],
  };
};

const insightOf = async (ids: Ids) =>
  (
    await pool.query<{
      entity_id: string;
      last_contacted_at: Date | null;
      last_contacted_via: string | null;
      next_meeting_at: Date | null;
      trend: string;
      engagement_30: number;
      crm: Record<string, unknown>;
    }>(
      `SELECT i.entity_id, last_contacted_at, last_contacted_via, next_meeting_at, trend, engagement_30, crm
         FROM entity_insight i JOIN source_link l ON l.entity_id = i.entity_id
        WHERE l.connection_id = $1 AND l.external_id = 'c-ada'`,
      [ids.crm],
    )
  ).rows[0];

const writesOf = async (ids: Ids) =>
  (
    await pool.query<{
      id: string;
      status: string;
      external_id: string;
      fields: Record<string, unknown>;
      idempotency_key: string;
      not_before: Date | null;
      sent_at: Date | null;
    }>(
      `SELECT id::text, status, external_id, fields, idempotency_key, not_before, sent_at FROM outbox
        WHERE connection_id = $1 AND op = 'insights' ORDER BY id`,
      [ids.crm],
    )
  ).rows;

describe('current insights and the CRM writes they owe', () => {
  it('keep the latest result and next meeting, one pending write with the latest values, a period after the last sent', async () => {
    const ids = await workspace();
    const events = history(ids);
    let now = new Date('2026-12-05T10:00:00.000Z');
    const stage = syncStage(pool, { clock: () => now });

    const owed = await stage.handle(...events.first);
    let insight = await insightOf(ids);
    expect(insight).toMatchObject({
      last_contacted_at: new Date('2026-12-04T10:00:00.000Z'),
      last_contacted_via: 'mail_in',
      next_meeting_at: new Date('2026-12-10T09:00:00.000Z'),
      trend: 'warming',
      engagement_30: 1,
    });
    const firstValues = {
      lastContactedAt: '2026-12-04T10:00:00.000Z',
      lastContactedVia: 'mail_in',
      nextMeetingAt: '2026-12-10T09:00:00.000Z',
      mailsIn30: 1,
      mailsOut30: 0,
      meetings30: 0,
      engagement7: 1,
      engagement90: 1,
      trend: 'warming',
    };
    expect(insight?.crm).toEqual(firstValues);
    let writes = await writesOf(ids);
    expect(writes).toMatchObject([
      {
        status: 'pending',
        external_id: 'c-ada',
        fields: firstValues,
        idempotency_key: `insights:${insight?.entity_id}:${now.getTime()}`,
        not_before: null,
      },
    ]);
    // The CRM is owed a push; the mailbox and calendar hold no such properties.
    expect(owed.push).toContain(ids.crm);
    expect(writes.every((w) => w.external_id === 'c-ada')).toBe(true);

    // A reply five seconds later: the pending write gives way to one with the latest values.
    now = new Date(now.getTime() + 5_000);
    await stage.handle(...events.reply);
    writes = await writesOf(ids);
    expect(writes.map((w) => w.status)).toEqual(['superseded', 'pending']);
    expect(writes[1]?.fields).toMatchObject({ lastContactedVia: 'mail_out', mailsOut30: 1 });

    // It is sent; a cancelled meeting then waits for the period to pass since that write.
    const sentAt = new Date('2026-12-05T10:00:06.000Z');
    await pool.query(`UPDATE outbox SET status = 'sent', sent_at = $2 WHERE id = $1`, [
      writes[1]!.id,
      sentAt,
    ]);
    now = new Date(now.getTime() + 5_000);
    await stage.handle(...events.cancel);
    insight = await insightOf(ids);
    expect(insight?.next_meeting_at).toBeNull();
    writes = await writesOf(ids);
    expect(writes.map((w) => w.status)).toEqual(['superseded', 'sent', 'pending']);
    expect(writes[2]?.fields).toMatchObject({ nextMeetingAt: null });
    expect(writes[2]?.not_before?.getTime()).toBe(sentAt.getTime() + INSIGHT_WRITE_PERIOD_MS);

    // A change of the person that moves no insight owes nothing more.
    now = new Date(now.getTime() + 5_000);
    await stage.handle(...events.phone);
    expect(await writesOf(ids)).toHaveLength(3);

    // A meeting at 11:00 is the next one until the log's time passes it.
    now = new Date(now.getTime() + 5_000);
    await stage.handle(...events.soon);
    expect((await insightOf(ids))?.next_meeting_at).toEqual(new Date('2026-12-05T11:00:00.000Z'));
    now = new Date('2026-12-05T11:30:00.000Z');
    await stage.handle(contactEvent(ids.workspaceId, ids.crm, 'c-bob', now, { email: 'bob@b.example' }));
    expect((await insightOf(ids))?.next_meeting_at).toBeNull();
    const last = (await writesOf(ids)).at(-1);
    expect(last?.status).toBe('pending');
    expect(last?.fields).toMatchObject({ nextMeetingAt: null });
  });

  it('take back a mail deleted in the mailbox, and tell the CRM its values are gone', async () => {
    const ids = await workspace();
    const events = history(ids);
    const now = new Date('2026-12-05T10:00:00.000Z');
    const stage = syncStage(pool, { clock: () => now });
    await stage.handle(...events.first.filter((e) => e.externalId !== 'evt-1'));
    expect(await insightOf(ids)).toMatchObject({ last_contacted_via: 'mail_in', engagement_30: 1 });
    await stage.handle({
      ...mail(ids, 'm-1', '2026-12-04T10:00:00.000Z', 'inbound'),
      op: 'delete',
      eventKey: 'messages:m-1:deleted',
      fields: {},
    });
    const insight = await insightOf(ids);
    expect(insight).toMatchObject({ last_contacted_at: null, last_contacted_via: null, engagement_30: 0 });
    expect(insight?.trend).toBe('cold');
    const last = (await writesOf(ids)).at(-1);
    expect(last?.fields).toMatchObject({ lastContactedAt: null, mailsIn30: 0, trend: 'cold' });
  });

  it('are the same when the log is folded again in one batch', async () => {
    const live = await workspace();
    const e = history(live);
    const now = new Date('2026-12-05T10:00:00.000Z');
    const stage = syncStage(pool, { clock: () => now });
    for (const batch of [e.first, e.reply, e.cancel, e.phone]) await stage.handle(...batch);

    const folded = await workspace();
    const f = history(folded);
    await syncStage(pool, { clock: () => now }).handle(...f.first, ...f.reply, ...f.cancel, ...f.phone);

    const { entity_id: _a, ...liveRow } = (await insightOf(live))!;
    const { entity_id: _b, ...foldedRow } = (await insightOf(folded))!;
    expect(foldedRow).toEqual(liveRow);
    const pending = async (ids: Ids) =>
      (await writesOf(ids)).filter((w) => w.status === 'pending').map((w) => w.fields);
    expect(await pending(folded)).toEqual(await pending(live));
    expect(await pending(live)).toHaveLength(1);
  });

  it('are cut in the workspace’s zone from the log: a new zone folds the windows again', async () => {
    const live = await workspace();
    const own = async (ids: Ids) =>
      (
        await pool.query<{ id: string }>(
          `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
           VALUES (gen_random_uuid(), $1, 'syncline', 'workspace', 'live') RETURNING id`,
          [ids.workspaceId],
        )
      ).rows[0]!.id;
    const tokyo = (ids: Ids, connection: string): StageEvent => ({
      ...timeZoneChangeInput(ids.workspaceId, connection, { timeZone: 'Asia/Tokyo', version: 1 }),
      fields: { timeZone: 'Asia/Tokyo', version: 1 },
      fieldTimes: {},
      eventTime: new Date('2026-12-05T09:58:00Z'),
      origin: null,
    });
    // 23:30 on 4 December in UTC is 08:30 on the 5th in Tokyo.
    const late = (ids: Ids) => [
      ...marks(ids),
      history(ids).first.find((e) => e.externalId === 'c-ada')!,
      mail(ids, 'm-9', '2026-12-04T23:30:00.000Z', 'inbound'),
    ];
    const now = new Date('2026-12-05T10:00:00.000Z');
    const stage = syncStage(pool, { clock: () => now });
    await stage.handle(...late(live));
    const days = async (ids: Ids) =>
      (
        await pool.query<{ window_end: string; mails: number }>(
          `SELECT p.window_end::text AS window_end, (p.metrics->'last7'->>'mailsIn')::int AS mails
             FROM insight_pane p JOIN source_link l ON l.entity_id = p.entity_id
            WHERE l.connection_id = $1 AND l.external_id = 'c-ada' ORDER BY 1`,
          [ids.crm],
        )
      ).rows;
    const firstDay = async (ids: Ids) => (await days(ids)).find((d) => d.mails > 0)?.window_end;
    expect(await firstDay(live)).toBe('2026-12-04');

    await stage.handle(tokyo(live, await own(live)));
    expect(await firstDay(live)).toBe('2026-12-05');
    const zone = await pool.query<{ time_zone: string | null }>(
      'SELECT time_zone FROM insights_state WHERE workspace_id = $1',
      [live.workspaceId],
    );
    expect(zone.rows[0]?.time_zone).toBe('Asia/Tokyo');

    // A fold of the same log in one batch meets the zone at the same place.
    const folded = await workspace();
    await syncStage(pool, { clock: () => now }).handle(...late(folded), tokyo(folded, await own(folded)));
    expect(await days(folded)).toEqual(await days(live));
  });
});
