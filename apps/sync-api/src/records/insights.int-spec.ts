import { randomUUID } from 'node:crypto';
// The workers' sync stage itself, in-process: the insights are only right if they are right
// for what the real stage folds.
import { contactEvent, type StageEvent, syncStage } from '@syncline/sync-stage/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

/**
 * A salesperson's "when did we last talk, when do we meet next": a person's insights through
 * the real sync stage and the API, complete up to the workspace's watermark, held back by a
 * connection that has not vouched yet, isolated per workspace.
 */
describe('GET /api/v1/people/{id}/insights', () => {
  let t: TestApp;
  let pool: Pool;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let stage: ReturnType<typeof syncStage>;
  let ada: string;
  let company: string;
  const conn = { crm: randomUUID(), calendar: randomUUID(), gmail: randomUUID() };
  const ME = 'me@acme.example';

  const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });
  const activity = (
    connectionId: string,
    entityType: 'meeting' | 'email_activity',
    externalId: string,
    fields: Record<string, unknown>,
  ): StageEvent => ({
    workspaceId: a.workspaceId,
    connectionId,
    entityType,
    externalId,
    op: 'upsert',
    eventKey: `${externalId}:1`,
    fields,
    fieldTimes: {},
    eventTime: new Date(String(fields.sentAt ?? fields.startAt)),
    origin: null,
  });
  const watermark = (
    connectionId: string,
    entityType: 'meeting' | 'email_activity',
    at: string,
  ): StageEvent => ({
    workspaceId: a.workspaceId,
    connectionId,
    entityType,
    externalId: 'watermark',
    op: 'watermark',
    eventKey: `watermark:${entityType}:${Date.parse(at)}`,
    fields: {},
    fieldTimes: {},
    eventTime: new Date(at),
    origin: null,
  });

  beforeAll(async () => {
    t = await startTestApp('records_insights');
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    for (const [name, provider] of [
      ['crm', 'hubspot'],
      ['calendar', 'google-calendar'],
      ['gmail', 'gmail'],
    ] as const)
      await pool.query(
        `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, display_name, account_address)
         VALUES ($1, $2, $3::provider, $4, 'live', $5, $6)`,
        [
          conn[name],
          a.workspaceId,
          provider,
          `acct-${name}`,
          `My ${name}`,
          provider === 'hubspot' ? null : ME,
        ],
      );
    stage = syncStage(pool);
    await stage.handle(
      contactEvent(a.workspaceId, conn.crm, 'c-ada', new Date('2026-11-01T00:00:00Z'), {
        email: 'ada@analytical.example',
        firstName: 'Ada',
      }),
      {
        ...contactEvent(a.workspaceId, conn.crm, 'co-1', new Date('2026-11-01T00:00:00Z'), {
          name: 'Analytical Engines',
          domain: 'analytical.example',
        }),
        entityType: 'company',
        eventKey: 'companies:co-1:1',
      },
      activity(conn.gmail, 'email_activity', 'm-1', {
        sentAt: '2026-11-20T10:00:00.000Z',
        direction: 'inbound',
        from: 'ada@analytical.example',
        to: [ME],
        threadId: 'th-1',
        subject: 'Pricing',
      }),
      activity(conn.gmail, 'email_activity', 'm-2', {
        sentAt: '2026-11-20T12:30:00.000Z',
        direction: 'outbound',
        from: ME,
        to: ['ada@analytical.example'],
        threadId: 'th-1',
        subject: 'Re: Pricing',
      }),
      activity(conn.calendar, 'meeting', 'evt-1', {
        iCalUID: 'evt-1@google.com',
        title: 'Review',
        startAt: '2099-01-15T09:00:00.000Z',
        organizer: ME,
        attendees: [ME, 'ada@analytical.example'],
      }),
    );
    const { rows } = await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'c-ada'`,
      [conn.crm],
    );
    ada = rows[0]!.entity_id;
    company = (
      await pool.query<{ entity_id: string }>(
        `SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = 'co-1'`,
        [conn.crm],
      )
    ).rows[0]!.entity_id;
  });

  afterAll(async () => {
    await pool?.end();
    await t?.close();
  });

  it('waits for every connection that reads activities, naming the one it waits for', async () => {
    await stage.handle(
      watermark(conn.crm, 'email_activity', '2026-11-21T00:05:00Z'),
      watermark(conn.crm, 'meeting', '2026-11-21T00:05:00Z'),
      watermark(conn.gmail, 'email_activity', '2026-11-21T00:05:00Z'),
    );
    const res = await get(salesKey, `/api/v1/people/${ada}/insights`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // The calendar has vouched for nothing yet: no day is final, and nothing is shown as if it were.
    expect(body).toMatchObject({
      recordId: ada,
      computedBy: 'syncline',
      completeUpTo: null,
      windowEnd: null,
      lastContactedAt: null,
      trend: 'cold',
      heldBy: [
        {
          connectionId: conn.calendar,
          provider: 'google-calendar',
          displayName: 'My calendar',
          status: 'live',
          watermark: null,
        },
      ],
    });
    // The next meeting does not wait for the watermark: it looks forward from now.
    expect(body.nextMeetingAt).toBe('2099-01-15T09:00:00.000Z');
  });

  it('once every connection vouched for the day: last contacted, counts, reply time, sources', async () => {
    await stage.handle(watermark(conn.calendar, 'meeting', '2026-11-21T00:05:00Z'));
    const res = await get(a.adminKey, `/api/v1/people/${ada}/insights`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      recordId: ada,
      computedBy: 'syncline',
      activities: 3,
      sources: [
        { provider: 'gmail', activities: 2 },
        { provider: 'google-calendar', activities: 1 },
      ],
      completeUpTo: '2026-11-21T00:05:00.000Z',
      heldBy: expect.arrayContaining([expect.objectContaining({ connectionId: conn.calendar })]),
      timeZone: 'UTC',
      windowEnd: '2026-11-20',
      trigger: 'on_time',
      lastContactedAt: '2026-11-20T12:30:00.000Z',
      lastContactedVia: 'mail_out',
      lastInboundAt: '2026-11-20T10:00:00.000Z',
      lastOutboundAt: '2026-11-20T12:30:00.000Z',
      nextMeetingAt: '2099-01-15T09:00:00.000Z',
      last7: { mailsIn: 1, mailsOut: 1, meetings: 0 },
      last30: { mailsIn: 1, mailsOut: 1, meetings: 0 },
      last90: { mailsIn: 1, mailsOut: 1, meetings: 0 },
      replies90: 1,
      medianReplySeconds90: 9000,
      trend: 'warming',
    });
  });

  it('a company counts the activities of its people (her company, by her address’s domain)', async () => {
    const res = await get(salesKey, `/api/v1/companies/${company}/insights`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      recordId: company,
      windowEnd: '2026-11-20',
      lastContactedAt: '2026-11-20T12:30:00.000Z',
      nextMeetingAt: '2099-01-15T09:00:00.000Z',
      last30: { mailsIn: 1, mailsOut: 1, meetings: 0 },
    });
    // A person's id is no company.
    expect((await get(salesKey, `/api/v1/companies/${ada}/insights`)).statusCode).toBe(404);
  });

  it('answers 404 for another workspace’s person and 400 for an id that is none', async () => {
    expect((await get(b.adminKey, `/api/v1/people/${ada}/insights`)).statusCode).toBe(404);
    expect((await get(a.adminKey, '/api/v1/people/not-a-uuid/insights')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/people/${ada}/insights` })).statusCode).toBe(
      401,
    );
  });
});
