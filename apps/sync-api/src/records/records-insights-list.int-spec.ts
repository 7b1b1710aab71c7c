import { randomUUID } from 'node:crypto';
import type { WorkspaceId } from '@syncline/core';
import type { PrismaClient } from '@syncline/core/db';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { RecordsRepository } from './records.repository';

interface Insights {
  lastContactedAt: string | null;
  lastContactedVia: string | null;
  nextMeetingAt: string | null;
  trend: string;
}
interface RecordBody {
  id: string;
  insights: Insights | null;
}
interface PageBody {
  data: RecordBody[];
  nextCursor: string | null;
}
interface ErrorBody {
  error: { code: string; message: string };
}

const NEVER: Insights = { lastContactedAt: null, lastContactedVia: null, nextMeetingAt: null, trend: 'cold' };

async function insertEntity(
  prisma: PrismaClient,
  row: { id: string; workspaceId: string; type: string; name: string; mergedInto?: string },
): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, provenance, merged_into, version, flags)
    VALUES (${row.id}::uuid, ${row.workspaceId}::uuid, ${row.type}, ${row.name},
            ${JSON.stringify({ name: row.name })}::jsonb, '{}'::jsonb, ${row.mergedInto ?? null}::uuid, 1, '{}'::jsonb)`;
}

async function insertInsight(
  prisma: PrismaClient,
  row: {
    entityId: string;
    workspaceId: string;
    type: string;
    contactedAt: string | null;
    via?: string;
    nextMeetingAt?: string;
    trend: string;
  },
): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO entity_insight (entity_id, workspace_id, entity_type, last_contacted_at, last_contacted_via,
                                next_meeting_at, trend, engagement_30)
    VALUES (${row.entityId}::uuid, ${row.workspaceId}::uuid, ${row.type}, ${row.contactedAt}::timestamptz,
            ${row.via ?? null}, ${row.nextMeetingAt ?? null}::timestamptz, ${row.trend}, 1)`;
}

/** Every id of a list, page after page, with the size of each page. */
async function walk(
  get: (url: string) => Promise<PageBody>,
  url: string,
): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let next: string | null = url;
  for (let page = 0; next !== null && page < 20; page++) {
    const body: PageBody = await get(next);
    ids.push(...body.data.map((r) => r.id));
    sizes.push(body.data.length);
    next = body.nextCursor === null ? null : `${url}&cursor=${encodeURIComponent(body.nextCursor)}`;
  }
  return { ids, sizes };
}

describe('record lists by activity insights', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };

  // Acme's people: four contacted (two at the same instant), one with a row but no contact yet,
  // three without a row; a merged-away one contacted last of all, which no list shows.
  const latest = randomUUID();
  const [tieLow, tieHigh] = [randomUUID(), randomUUID()].sort() as [string, string];
  const oldest = randomUUID();
  const rowNoContact = randomUUID();
  const noRow = [randomUUID(), randomUUID(), randomUUID()];
  const merged = randomUUID();
  const acmeCompany = randomUUID();
  const acmeMeeting = randomUUID();
  // Globex's people: one with its own row, one whose only row is (wrongly) Acme's.
  const globexContacted = randomUUID();
  const globexForeignRow = randomUUID();

  const never = [rowNoContact, ...noRow].sort();
  const tieAt = '2026-12-10T09:30:00.000Z';
  const futureMeeting = new Date(Date.now() + 3 * 86_400_000).toISOString();

  const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });
  const page = async (key: string, url: string): Promise<PageBody> => {
    const res = await get(key, url);
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    return res.json<PageBody>();
  };
  const ids = async (key: string, url: string) => (await page(key, url)).data.map((r) => r.id);

  beforeAll(async () => {
    t = await startTestApp('records_insights_list');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    const ws = a.workspaceId;
    for (const [id, name] of [
      [latest, 'Latest'],
      [tieLow, 'Tie low'],
      [tieHigh, 'Tie high'],
      [oldest, 'Oldest'],
      [rowNoContact, 'Row, no contact'],
      ...noRow.map((id, i) => [id, `No row ${i}`]),
    ] as [string, string][])
      await insertEntity(t.prisma, { id, workspaceId: ws, type: 'person', name });
    await insertEntity(t.prisma, {
      id: merged,
      workspaceId: ws,
      type: 'person',
      name: 'Merged',
      mergedInto: latest,
    });
    await insertEntity(t.prisma, { id: acmeCompany, workspaceId: ws, type: 'company', name: 'Acme Inc' });
    await insertEntity(t.prisma, { id: acmeMeeting, workspaceId: ws, type: 'meeting', name: 'Kickoff' });
    await insertEntity(t.prisma, {
      id: globexContacted,
      workspaceId: b.workspaceId,
      type: 'person',
      name: 'G1',
    });
    await insertEntity(t.prisma, {
      id: globexForeignRow,
      workspaceId: b.workspaceId,
      type: 'person',
      name: 'G2',
    });

    const person = { workspaceId: ws, type: 'person' };
    await insertInsight(t.prisma, {
      ...person,
      entityId: latest,
      contactedAt: '2026-12-12T08:00:00.000Z',
      via: 'meeting',
      nextMeetingAt: futureMeeting,
      trend: 'warming',
    });
    // A next meeting that has started is not ahead any more.
    await insertInsight(t.prisma, {
      ...person,
      entityId: tieLow,
      contactedAt: tieAt,
      via: 'mail_in',
      nextMeetingAt: '2026-01-01T10:00:00.000Z',
      trend: 'steady',
    });
    await insertInsight(t.prisma, {
      ...person,
      entityId: tieHigh,
      contactedAt: tieAt,
      via: 'mail_out',
      trend: 'cooling',
    });
    await insertInsight(t.prisma, {
      ...person,
      entityId: oldest,
      contactedAt: '2026-08-01T00:00:00.000Z',
      via: 'mail_out',
      trend: 'cold',
    });
    await insertInsight(t.prisma, { ...person, entityId: rowNoContact, contactedAt: null, trend: 'cold' });
    await insertInsight(t.prisma, {
      ...person,
      entityId: merged,
      contactedAt: '2026-12-13T00:00:00.000Z',
      via: 'meeting',
      trend: 'warming',
    });
    await insertInsight(t.prisma, {
      workspaceId: ws,
      type: 'company',
      entityId: acmeCompany,
      contactedAt: '2026-12-14T00:00:00.000Z',
      via: 'meeting',
      trend: 'warming',
    });
    await insertInsight(t.prisma, {
      workspaceId: b.workspaceId,
      type: 'person',
      entityId: globexContacted,
      contactedAt: '2026-12-01T00:00:00.000Z',
      via: 'mail_in',
      trend: 'steady',
    });
    // A row under Acme for Globex's record: neither workspace may read it.
    await insertInsight(t.prisma, {
      workspaceId: ws,
      type: 'person',
      entityId: globexForeignRow,
      contactedAt: '2026-12-15T00:00:00.000Z',
      via: 'meeting',
      trend: 'warming',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('orders by last contacted: latest first, ties by id, then the never contacted by id', async () => {
    expect(await ids(a.adminKey, '/api/v1/people?sort=-lastContacted')).toEqual([
      latest,
      tieHigh,
      tieLow,
      oldest,
      ...never,
    ]);
  });

  it('pages the order exactly, through the tie and into the records never contacted', async () => {
    const expected = [latest, tieHigh, tieLow, oldest, ...never];
    for (const limit of [1, 2, 3, 5]) {
      const walked = await walk(
        (url) => page(a.adminKey, url),
        `/api/v1/people?sort=-lastContacted&limit=${limit}`,
      );
      expect(walked.ids, `limit ${limit}`).toEqual(expected);
      expect(walked.sizes, `limit ${limit}`).toEqual(
        Array.from({ length: Math.ceil(expected.length / limit) }, (_, i) =>
          Math.min(limit, expected.length - i * limit),
        ),
      );
    }
    // With a filter as well: the search keeps the order and its paging.
    const search = await walk(
      (url) => page(a.adminKey, url),
      '/api/v1/people?sort=-lastContacted&limit=2&q=o',
    );
    expect(search.ids).toEqual([tieLow, oldest, ...never]);
  });

  it('carries each row’s insights, as the get does; a record without a row is cold, never contacted', async () => {
    const rows = (await page(a.adminKey, '/api/v1/people?sort=-lastContacted')).data;
    const byId = new Map(rows.map((r) => [r.id, r.insights]));
    expect(byId.get(latest)).toEqual({
      lastContactedAt: '2026-12-12T08:00:00.000Z',
      lastContactedVia: 'meeting',
      nextMeetingAt: futureMeeting,
      trend: 'warming',
    });
    expect(byId.get(tieLow)).toEqual({
      lastContactedAt: tieAt,
      lastContactedVia: 'mail_in',
      nextMeetingAt: null,
      trend: 'steady',
    });
    expect(byId.get(rowNoContact)).toEqual(NEVER);
    expect(byId.get(noRow[0]!)).toEqual(NEVER);

    const one = await get(a.adminKey, `/api/v1/people/${latest}`);
    expect(one.json<RecordBody>().insights).toEqual(byId.get(latest));
    // A merged-away id reads as its survivor, insights and all.
    expect((await get(a.adminKey, `/api/v1/people/${merged}`)).json<RecordBody>().insights).toEqual(
      byId.get(latest),
    );
    // In the default order too, and for companies.
    const byIdOrder = (await page(a.adminKey, '/api/v1/people')).data;
    expect(byIdOrder.find((r) => r.id === latest)?.insights?.trend).toBe('warming');
    expect((await page(a.adminKey, '/api/v1/companies?sort=-lastContacted')).data).toEqual([
      expect.objectContaining({
        id: acmeCompany,
        insights: {
          lastContactedAt: '2026-12-14T00:00:00.000Z',
          lastContactedVia: 'meeting',
          nextMeetingAt: null,
          trend: 'warming',
        },
      }),
    ]);
    // Types without insights say so.
    expect((await page(a.adminKey, '/api/v1/meetings')).data).toEqual([
      expect.objectContaining({ id: acmeMeeting, insights: null }),
    ]);
  });

  it('filters by trend; cold includes the records without a row', async () => {
    expect(await ids(a.adminKey, '/api/v1/people?trend=warming')).toEqual([latest]);
    expect(await ids(a.adminKey, '/api/v1/people?trend=steady')).toEqual([tieLow]);
    expect(await ids(a.adminKey, '/api/v1/people?trend=cooling')).toEqual([tieHigh]);
    expect(await ids(a.adminKey, '/api/v1/people?trend=cold')).toEqual(
      [oldest, rowNoContact, ...noRow].sort(),
    );
    expect(await ids(a.adminKey, '/api/v1/people?trend=cold&sort=-lastContacted')).toEqual([
      oldest,
      ...never,
    ]);
    const cold = await walk(
      (url) => page(a.adminKey, url),
      '/api/v1/people?trend=cold&sort=-lastContacted&limit=2',
    );
    expect(cold).toEqual({ ids: [oldest, ...never], sizes: [2, 2, 1] });
    expect(await ids(a.adminKey, '/api/v1/companies?trend=warming')).toEqual([acmeCompany]);
    expect(await ids(a.adminKey, '/api/v1/deals?trend=cold')).toEqual([]);
  });

  it("never shows one workspace's insight rows to another", async () => {
    // Globex's record under an Acme row: cold and never contacted for Globex, absent for Acme.
    expect((await get(b.adminKey, `/api/v1/people/${globexForeignRow}`)).json<RecordBody>().insights).toEqual(
      NEVER,
    );
    expect(await ids(b.adminKey, '/api/v1/people?sort=-lastContacted')).toEqual([
      globexContacted,
      globexForeignRow,
    ]);
    const walked = await walk((url) => page(b.adminKey, url), '/api/v1/people?sort=-lastContacted&limit=1');
    expect(walked.ids).toEqual([globexContacted, globexForeignRow]);
    expect(await ids(b.adminKey, '/api/v1/people?trend=warming')).toEqual([]);
    expect(await ids(b.adminKey, '/api/v1/people?trend=cold')).toEqual([globexForeignRow]);
    expect(await ids(b.adminKey, '/api/v1/people?trend=steady')).toEqual([globexContacted]);
    expect(await ids(a.adminKey, '/api/v1/people?trend=warming&sort=-lastContacted')).toEqual([latest]);
    const acmeAll = await ids(a.adminKey, '/api/v1/people?sort=-lastContacted&limit=200');
    expect(acmeAll).not.toContain(globexForeignRow);
    expect(acmeAll).not.toContain(globexContacted);
    // An Acme cursor read by Globex continues Globex's own list, with nothing of Acme's.
    const acmePage = await page(a.adminKey, '/api/v1/people?sort=-lastContacted&limit=1');
    const cross = await ids(
      b.adminKey,
      `/api/v1/people?sort=-lastContacted&cursor=${encodeURIComponent(acmePage.nextCursor!)}`,
    );
    expect(cross).toEqual([globexContacted, globexForeignRow]);
  });

  it('reads last-contacted pages in the one statement of their turn, beside lists of other orders', async () => {
    const records = t.app.get(RecordsRepository);
    // Should the turn's statement fail, each page would be read alone.
    const alone = vi.spyOn(records as unknown as { page: () => unknown }, 'page');
    try {
      const workspace = a.workspaceId as WorkspaceId;
      const [byContact, byName, cold, globex] = await Promise.all([
        records.list(workspace, 'person', { sort: '-lastContacted', limit: 3 }),
        records.list(workspace, 'person', { sort: 'name', limit: 2 }),
        records.list(workspace, 'person', {
          sort: '-lastContacted',
          trend: 'cold',
          after: { sort: '-lastContacted', value: null, id: never[0]! },
          limit: 10,
        }),
        records.list(b.workspaceId as WorkspaceId, 'person', { sort: '-lastContacted', limit: 10 }),
      ]);
      expect(alone).not.toHaveBeenCalled();
      expect(byContact.map((r) => [r.id, r.contactedAt?.toISOString() ?? null])).toEqual([
        [latest, '2026-12-12T08:00:00.000Z'],
        [tieHigh, tieAt],
        [tieLow, tieAt],
      ]);
      expect(byName.map((r) => r.displayName)).toEqual(['Latest', 'No row 0']);
      expect(cold.map((r) => r.id)).toEqual(never.slice(1));
      expect(globex.map((r) => r.id)).toEqual([globexContacted, globexForeignRow]);
    } finally {
      alone.mockRestore();
    }
  });

  it('400 with the reason for an unknown sort or trend, or a cursor of another order', async () => {
    const cursorOf = (value: unknown[]) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const updatedCursor = (await page(a.adminKey, '/api/v1/people?sort=-updatedAt&limit=1')).nextCursor!;
    const cases: [string, RegExp][] = [
      ['/api/v1/people?sort=lastContacted', /sort/],
      ['/api/v1/people?trend=hot', /trend/],
      ['/api/v1/people?trend=', /trend/],
      ['/api/v1/meetings?sort=-lastContacted', /sort/],
      [`/api/v1/people?sort=-lastContacted&cursor=${updatedCursor}`, /cursor/],
      [
        `/api/v1/people?sort=-lastContacted&cursor=${cursorOf(['-lastContacted', 'yesterday', latest])}`,
        /cursor/,
      ],
      [`/api/v1/people?sort=-updatedAt&cursor=${cursorOf(['-updatedAt', null, latest])}`, /cursor/],
    ];
    for (const [url, reason] of cases) {
      const res = await get(a.adminKey, url);
      expect(res.statusCode, url).toBe(400);
      const body = res.json<ErrorBody>();
      expect(body.error.code, url).toBe('validation_failed');
      expect(body.error.message, url).toMatch(reason);
    }
    // A cursor into the records never contacted is one this API makes.
    const res = await get(
      a.adminKey,
      `/api/v1/people?sort=-lastContacted&cursor=${cursorOf(['-lastContacted', null, never[0]])}`,
    );
    expect(res.json<PageBody>().data.map((r) => r.id)).toEqual(never.slice(1));
  });
});
