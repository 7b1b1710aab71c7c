import { randomUUID } from 'node:crypto';
import { identityOperationChange } from '@syncline/identity';
// The workers' sync stage itself, in-process: the timeline is only right if it is right for
// what the real stage writes.
import { contactEvent, type StageEvent, syncStage } from '@syncline/sync-stage/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface TimelineBody {
  recordId: string;
  data: {
    id: string;
    type: string;
    occurredAt: string;
    title: string | null;
    roles: string[];
    sourceLinks: { connectionId: string; provider: string | null; externalId: string; url: string | null }[];
  }[];
  nextCursor: string | null;
}

/**
 * A salesperson's timeline of a person: meetings and mails from Google, through the real sync
 * stage, read back newest first in pages, filtered by type, isolated per workspace, and read
 * through the survivor once a duplicate was merged into it.
 */
describe('GET /api/v1/people/{id}/timeline', () => {
  let t: TestApp;
  let pool: Pool;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  const conn: Record<'crmA' | 'crmB' | 'calendar' | 'gmail' | 'own', string> = {
    crmA: randomUUID(),
    crmB: randomUUID(),
    calendar: randomUUID(),
    gmail: randomUUID(),
    own: randomUUID(),
  };
  const T0 = new Date('2026-11-20T09:00:00.000Z').getTime();
  const at = (minutes: number) => new Date(T0 + minutes * 60_000);
  let stage: ReturnType<typeof syncStage>;
  const ids: Record<string, string> = {};

  const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });
  const timeline = async (id: string, query = '', key = a.adminKey): Promise<TimelineBody> => {
    const res = await get(key, `/api/v1/people/${id}/timeline${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<TimelineBody>();
  };
  const entityOf = async (connectionId: string, externalId: string): Promise<string> => {
    const { rows } = await pool.query<{ entity_id: string }>(
      'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
      [connectionId, externalId],
    );
    const id = rows[0]?.entity_id;
    if (id === undefined) throw new Error(`${externalId} is not linked`);
    return id;
  };
  const event = (
    connectionId: string,
    entityType: 'meeting' | 'email_activity',
    externalId: string,
    time: Date,
    fields: Record<string, unknown>,
  ): StageEvent => ({
    workspaceId: a.workspaceId,
    connectionId,
    entityType,
    externalId,
    op: 'upsert',
    eventKey: `${externalId}:${time.getTime()}`,
    fields,
    fieldTimes: {},
    eventTime: time,
    origin: null,
  });

  beforeAll(async () => {
    t = await startTestApp('records_timeline');
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    const providers = {
      crmA: 'hubspot',
      crmB: 'hubspot',
      calendar: 'google-calendar',
      gmail: 'gmail',
      own: 'syncline',
    };
    for (const [name, provider] of Object.entries(providers))
      await pool.query(
        `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
         VALUES ($1, $2, $3::provider, $4, 'live')`,
        [conn[name as keyof typeof conn], a.workspaceId, provider, `acct-${name}-${randomUUID()}`],
      );
    stage = syncStage(pool);
    const contact = (connectionId: string, externalId: string, fields: Record<string, unknown>) =>
      contactEvent(a.workspaceId, connectionId, externalId, at(0), fields);
    await stage.handle(
      contact(conn.crmA, 'c-ada', {
        email: 'ada@analytical.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
      }),
      // Another address and another spelling: a separate person until someone merges them.
      contact(conn.crmB, 'c-ada-2', {
        email: 'countess@lovelace.example',
        firstName: 'Augusta',
        lastName: 'King',
      }),
      contact(conn.crmA, 'c-cy', { email: 'cy@other.example', firstName: 'Cy' }),
      event(conn.calendar, 'meeting', 'evt-kickoff', at(1), {
        iCalUID: 'kickoff@google.com',
        title: 'Kickoff',
        startAt: '2026-11-21T10:00:00.000Z',
        organizer: 'me@acme.example',
        attendees: [{ email: 'ada@analytical.example', responseStatus: 'accepted' }],
      }),
      event(conn.calendar, 'meeting', 'evt-review', at(2), {
        iCalUID: 'review@google.com',
        title: 'Review',
        startAt: '2026-11-24T10:00:00.000Z',
        organizer: 'ada@analytical.example',
        attendees: [
          { email: 'ada@analytical.example', responseStatus: 'accepted', organizer: true },
          { email: 'me@acme.example', responseStatus: 'accepted' },
        ],
      }),
      event(conn.gmail, 'email_activity', 'm-numbers', at(3), {
        messageId: '<numbers@analytical.example>',
        subject: 'Numbers',
        from: 'ada@analytical.example',
        to: ['me@acme.example'],
        sentAt: '2026-11-22T08:00:00.000Z',
      }),
      event(conn.gmail, 'email_activity', 'm-reply', at(4), {
        messageId: '<reply@acme.example>',
        subject: 'Re: Numbers',
        from: 'me@acme.example',
        to: ['boss@acme.example'],
        cc: ['ada@analytical.example'],
        sentAt: '2026-11-23T08:00:00.000Z',
      }),
      event(conn.gmail, 'email_activity', 'm-cy', at(5), {
        messageId: '<cy@other.example>',
        subject: 'Hello from Cy',
        from: 'cy@other.example',
        to: ['me@acme.example'],
        sentAt: '2026-11-25T08:00:00.000Z',
      }),
      event(conn.gmail, 'email_activity', 'm-countess', at(6), {
        messageId: '<countess@lovelace.example>',
        subject: 'From my other address',
        from: 'countess@lovelace.example',
        to: ['me@acme.example'],
        sentAt: '2026-11-26T08:00:00.000Z',
      }),
    );
    ids.ada = await entityOf(conn.crmA, 'c-ada');
    ids.countess = await entityOf(conn.crmB, 'c-ada-2');
    for (const ext of ['evt-kickoff', 'evt-review']) ids[ext] = await entityOf(conn.calendar, ext);
    for (const ext of ['m-numbers', 'm-reply', 'm-cy', 'm-countess'])
      ids[ext] = await entityOf(conn.gmail, ext);
  });

  afterAll(async () => {
    await pool?.end();
    await t?.close();
  });

  it("lists the person's meetings and mails newest first, with the person's role and the source links", async () => {
    const body = await timeline(ids.ada as string);
    expect(body.recordId).toBe(ids.ada);
    expect(body.nextCursor).toBeNull();
    expect(body.data.map((i) => [i.id, i.type, i.occurredAt, i.title, i.roles])).toEqual([
      [ids['evt-review'], 'meeting', '2026-11-24T10:00:00.000Z', 'Review', ['organizer']],
      [ids['m-reply'], 'email_activity', '2026-11-23T08:00:00.000Z', 'Re: Numbers', ['cc']],
      [ids['m-numbers'], 'email_activity', '2026-11-22T08:00:00.000Z', 'Numbers', ['from']],
      [ids['evt-kickoff'], 'meeting', '2026-11-21T10:00:00.000Z', 'Kickoff', ['attendee']],
    ]);
    expect(body.data[0]?.sourceLinks).toEqual([
      {
        connectionId: conn.calendar,
        provider: 'google-calendar',
        externalId: 'evt-review',
        // Google Calendar's page of the event: "<event id> <calendar id>" in its eid.
        url: expect.stringMatching(/^https:\/\/calendar\.google\.com\/calendar\/event\?eid=/),
      },
    ]);
  });

  it('pages with the cursor, one item at a time, without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`;
      const body: TimelineBody = await timeline(ids.ada as string, query);
      expect(body.data).toHaveLength(1);
      seen.push(...body.data.map((i) => i.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual([ids['evt-review'], ids['m-reply'], ids['m-numbers'], ids['evt-kickoff']]);
  });

  it('filters by type', async () => {
    const meetings = await timeline(ids.ada as string, '?types=meeting');
    expect(meetings.data.map((i) => i.id)).toEqual([ids['evt-review'], ids['evt-kickoff']]);
    const mails = await timeline(ids.ada as string, '?types=email_activity,task');
    expect(mails.data.map((i) => i.id)).toEqual([ids['m-reply'], ids['m-numbers']]);
    const tasks = await timeline(ids.ada as string, '?types=task');
    expect(tasks.data).toEqual([]);
  });

  it('refuses a malformed type list or cursor (400 in the error shape)', async () => {
    for (const query of ['?types=meeting,call', '?types=', '?cursor=bm90LWEtY3Vyc29y', '?limit=0']) {
      const res = await get(a.adminKey, `/api/v1/people/${ids.ada}/timeline${query}`);
      expect([res.statusCode, res.json<{ error: { code: string } }>().error.code], query).toEqual([
        400,
        'validation_failed',
      ]);
    }
  });

  it('is readable with a sales key; another workspace, an unknown id or a non-person answer 404', async () => {
    expect((await timeline(ids.ada as string, '', salesKey)).data).toHaveLength(4);
    for (const [key, id] of [
      [b.adminKey, ids.ada],
      [a.adminKey, randomUUID()],
      [a.adminKey, ids['evt-review']],
    ] as const) {
      const res = await get(key, `/api/v1/people/${id}/timeline`);
      expect([res.statusCode, res.json<{ error: { code: string } }>().error.code]).toEqual([
        404,
        'not_found',
      ]);
      expect(res.body).not.toContain('Kickoff');
    }
  });

  it("reads a merged-away person through the survivor, whose timeline holds both people's activities", async () => {
    const merge = {
      kind: 'merge',
      operationId: randomUUID(),
      workspaceId: a.workspaceId,
      entityType: 'person',
      survivorId: ids.ada as string,
      absorbedId: ids.countess as string,
    } as const;
    const change = identityOperationChange(merge, conn.own, at(20));
    await stage.handle({
      ...change,
      eventTime: at(20),
      fields: change.fields ?? {},
      fieldTimes: {},
      origin: null,
    });
    const { rows } = await pool.query('SELECT merged_into FROM entity WHERE id = $1', [ids.countess]);
    expect(rows[0]?.merged_into).toBe(ids.ada);

    const expected = [
      ids['m-countess'],
      ids['evt-review'],
      ids['m-reply'],
      ids['m-numbers'],
      ids['evt-kickoff'],
    ];
    const survivor = await timeline(ids.ada as string);
    expect(survivor.data.map((i) => i.id)).toEqual(expected);
    const throughAbsorbed = await timeline(ids.countess as string);
    expect(throughAbsorbed.recordId).toBe(ids.ada);
    expect(throughAbsorbed.data.map((i) => i.id)).toEqual(expected);
    // Cy's mail is nobody's here.
    expect(survivor.data.map((i) => i.id)).not.toContain(ids['m-cy']);
  });
});
