import { randomUUID } from 'node:crypto';
// The workers' sync stage itself, in-process: associations are only right if they are right
// for what the real stage writes.
import { contactEvent, type StageEvent, syncStage } from '@syncline/sync-stage/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface Association {
  id: string;
  type: string;
  displayName: string | null;
  sources: { kind: string; connectionId: string | null; provider: string | null; evidence: unknown }[];
}
interface TimelineBody {
  recordId: string;
  data: { id: string; type: string; title: string | null; roles: string[] }[];
  nextCursor: string | null;
}

/**
 * A record's associations (a person's company and deals, a company's people and deals, a
 * deal's people and company) and the company and deal timelines, from what the real sync
 * stage writes for two CRMs and a mailbox; isolated per workspace.
 */
describe('record associations and company and deal timelines', () => {
  let t: TestApp;
  let pool: Pool;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  const conn = { crmA: randomUUID(), crmB: randomUUID(), gmail: randomUUID(), calendar: randomUUID() };
  type Named = 'ada' | 'acme' | 'big' | 'dee' | 'm-dee' | 'm-ada-1' | 'm-ada-2' | 'm-cy' | 'evt-1';
  const ids = {} as Record<Named, string>;
  const at = (minutes: number) => new Date(Date.parse('2026-11-20T09:00:00.000Z') + minutes * 60_000);

  const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });
  const record = async (resource: string, id: string) => {
    const res = await get(a.adminKey, `/api/v1/${resource}/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ associations: Association[] }>().associations;
  };
  const timeline = async (resource: string, id: string, query = ''): Promise<TimelineBody> => {
    const res = await get(a.adminKey, `/api/v1/${resource}/${id}/timeline${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<TimelineBody>();
  };
  const entityOf = async (connectionId: string, externalId: string): Promise<string> => {
    const { rows } = await pool.query<{ entity_id: string }>(
      'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
      [connectionId, externalId],
    );
    if (!rows[0]) throw new Error(`${externalId} is not linked`);
    return rows[0].entity_id;
  };
  const crm = (
    connectionId: string,
    entityType: 'person' | 'company' | 'deal',
    externalId: string,
    fields: Record<string, unknown>,
  ): StageEvent => ({
    ...contactEvent(a.workspaceId, connectionId, externalId, at(0), fields),
    entityType,
    eventKey: `${entityType}:${externalId}`,
  });
  const mail = (externalId: string, from: string, sentAt: string): StageEvent => ({
    workspaceId: a.workspaceId,
    connectionId: conn.gmail,
    entityType: 'email_activity',
    externalId,
    op: 'upsert',
    eventKey: `messages:${externalId}`,
    fields: {
      messageId: `<${externalId}@x.example>`,
      subject: `Mail ${externalId}`,
      from,
      to: ['me@syncline.example'],
      sentAt,
    },
    fieldTimes: {},
    eventTime: at(1),
    origin: null,
  });

  beforeAll(async () => {
    t = await startTestApp('records_associations');
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    const providers = { crmA: 'hubspot', crmB: 'hubspot', gmail: 'gmail', calendar: 'google-calendar' };
    for (const [name, provider] of Object.entries(providers))
      await pool.query(
        `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
         VALUES ($1, $2, $3::provider, $4, 'live')`,
        [conn[name as keyof typeof conn], a.workspaceId, provider, `acct-${name}-${randomUUID()}`],
      );
    const stage = syncStage(pool);
    await stage.handle(
      crm(conn.crmA, 'company', 'a-acme', { name: 'Acme', domain: 'acme.example' }),
      crm(conn.crmA, 'person', 'a-ada', {
        email: 'ada@acme.example',
        firstName: 'Ada',
        associations: { company: ['a-acme'] },
      }),
      crm(conn.crmA, 'deal', 'a-big', {
        name: 'Big deal',
        associations: { person: ['a-ada'], company: ['a-acme'] },
      }),
      // CRM B says the same of Ada, under its own ids.
      crm(conn.crmB, 'person', 'b-ada', { email: 'ada@acme.example', associations: { company: ['b-acme'] } }),
      crm(conn.crmB, 'company', 'b-acme', { name: 'Acme Inc', domain: 'acme.example' }),
      // Dee is only in the mailbox; Cy works elsewhere.
      mail('m-dee', 'dee@acme.example', '2026-11-21T08:00:00.000Z'),
      mail('m-ada-1', 'ada@acme.example', '2026-11-22T08:00:00.000Z'),
      mail('m-ada-2', 'ada@acme.example', '2026-11-23T08:00:00.000Z'),
      mail('m-cy', 'cy@other.example', '2026-11-24T08:00:00.000Z'),
      {
        ...mail('evt-1', 'x', ''),
        connectionId: conn.calendar,
        entityType: 'meeting',
        eventKey: 'events:evt-1',
        fields: {
          iCalUID: 'evt-1@google.com',
          title: 'Kickoff',
          startAt: '2026-11-25T10:00:00.000Z',
          attendees: [{ email: 'ada@acme.example', responseStatus: 'accepted' }],
        },
      },
    );
    ids.ada = await entityOf(conn.crmA, 'a-ada');
    ids.acme = await entityOf(conn.crmA, 'a-acme');
    ids.big = await entityOf(conn.crmA, 'a-big');
    const { rows } = await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM match_key WHERE workspace_id = $1 AND kind = 'email' AND value = 'dee@acme.example'`,
      [a.workspaceId],
    );
    ids.dee = rows[0]?.entity_id ?? '';
    for (const m of ['m-dee', 'm-ada-1', 'm-ada-2', 'm-cy', 'evt-1'] as const)
      ids[m] = await entityOf(m === 'evt-1' ? conn.calendar : conn.gmail, m);
  });

  afterAll(async () => {
    await pool?.end();
    await t?.close();
  });

  const crmSource = (connectionId: string) => ({
    kind: 'connection',
    connectionId,
    provider: 'hubspot',
    evidence: null,
  });

  it("shows a person's company (both CRMs as one) and deal, a company's people and deal, a deal's people and company", async () => {
    expect(await entityOf(conn.crmB, 'b-ada')).toBe(ids.ada);
    expect(await entityOf(conn.crmB, 'b-acme')).toBe(ids.acme);
    const ada = await record('people', ids.ada);
    expect(ada.map((x) => [x.type, x.id])).toEqual(
      [
        ['company', ids.acme],
        ['deal', ids.big],
      ].sort(),
    );
    const company = ada.find((x) => x.type === 'company');
    expect(company?.displayName).toBe('Acme');
    expect(company?.sources).toEqual(expect.arrayContaining([crmSource(conn.crmA), crmSource(conn.crmB)]));
    expect(company?.sources).toHaveLength(2);

    const acme = await record('companies', ids.acme);
    expect(acme.map((x) => x.id).sort()).toEqual([ids.ada, ids.dee, ids.big].sort());
    // Dee is known from the mailbox only: derived by her address's domain, with the evidence.
    expect(acme.find((x) => x.id === ids.dee)?.sources).toEqual([
      {
        kind: 'derived',
        connectionId: null,
        provider: null,
        evidence: { domain: 'acme.example', email: 'dee@acme.example' },
      },
    ]);
    expect(acme.find((x) => x.id === ids.big)?.sources).toEqual([crmSource(conn.crmA)]);

    const big = await record('deals', ids.big);
    expect(big.map((x) => [x.type, x.id]).sort()).toEqual(
      [
        ['company', ids.acme],
        ['person', ids.ada],
      ].sort(),
    );
    // Lists carry them too.
    const listed = await get(a.adminKey, `/api/v1/deals?limit=10`);
    expect(
      listed
        .json<{ data: { id: string; associations: Association[] }[] }>()
        .data.find((d) => d.id === ids.big)?.associations,
    ).toHaveLength(2);
  });

  it("pages a company's timeline (its people's mails and meetings) and a deal's, newest first", async () => {
    const all = await timeline('companies', ids.acme);
    expect(all.recordId).toBe(ids.acme);
    expect(all.data.map((i) => i.id)).toEqual([ids['evt-1'], ids['m-ada-2'], ids['m-ada-1'], ids['m-dee']]);
    expect(all.data[0]?.roles).toEqual(['attendee']);
    expect(all.nextCursor).toBeNull();

    const first = await timeline('companies', ids.acme, '?limit=3');
    expect(first.data.map((i) => i.id)).toEqual([ids['evt-1'], ids['m-ada-2'], ids['m-ada-1']]);
    expect(first.nextCursor).not.toBeNull();
    const second = await timeline('companies', ids.acme, `?limit=3&cursor=${first.nextCursor}`);
    expect(second.data.map((i) => i.id)).toEqual([ids['m-dee']]);
    expect(second.nextCursor).toBeNull();
    const mails = await timeline('companies', ids.acme, '?types=email_activity');
    expect(mails.data.map((i) => i.type)).toEqual(['email_activity', 'email_activity', 'email_activity']);

    // The deal involves Ada only: Dee's mail and Cy's are not on it.
    const deal = await timeline('deals', ids.big);
    expect(deal.data.map((i) => i.id)).toEqual([ids['evt-1'], ids['m-ada-2'], ids['m-ada-1']]);
  });

  it("answers 404 for another workspace's company or deal, and for an id of another type", async () => {
    for (const url of [
      `/api/v1/companies/${ids.acme}/timeline`,
      `/api/v1/deals/${ids.big}/timeline`,
      `/api/v1/companies/${ids.acme}`,
    ]) {
      const res = await get(b.adminKey, url);
      expect([res.statusCode, res.json<{ error: { code: string } }>().error.code], url).toEqual([
        404,
        'not_found',
      ]);
    }
    const wrongType = await get(a.adminKey, `/api/v1/deals/${ids.acme}/timeline`);
    expect(wrongType.statusCode).toBe(404);
    // B's own company has no associations and an empty timeline, whatever A has.
    expect((await get(b.adminKey, `/api/v1/companies?limit=5`)).json<{ data: unknown[] }>().data).toEqual([]);
  });
});
