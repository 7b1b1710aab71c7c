import { randomUUID } from 'node:crypto';
import type { WorkspaceId } from '@syncline/core';
import type { PrismaClient } from '@syncline/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { type EntityFilter, RecordsRepository } from './records.repository';

interface PageBody {
  data: { id: string; displayName: string | null; fields: Record<string, unknown>; updatedAt: string }[];
  nextCursor: string | null;
}

async function insertEntity(
  prisma: PrismaClient,
  row: { workspaceId: string; type: string; displayName: string; fields: object; updatedAt: string },
): Promise<string> {
  const id = randomUUID();
  await prisma.$executeRaw`
    INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version, updated_at)
    VALUES (${id}::uuid, ${row.workspaceId}::uuid, ${row.type}, ${row.displayName},
            ${JSON.stringify(row.fields)}::jsonb, 1, ${row.updatedAt}::timestamptz)`;
  return id;
}

describe('record lists: search, filters, order', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  const people = [
    {
      name: 'Ada Lovelace',
      email: 'ada@analytical.example',
      owner: 'u1',
      stage: 'lead',
      at: '2026-11-01T10:00:00.000Z',
    },
    {
      name: 'Grace Hopper',
      email: 'grace@navy.example',
      owner: 'u2',
      stage: 'customer',
      at: '2026-11-03T10:00:00.000Z',
    },
    {
      name: 'alan turing',
      email: 'alan@bletchley.example',
      owner: 'u1',
      stage: 'customer',
      at: '2026-11-02T10:00:00.000Z',
    },
    {
      name: 'Émilie du Châtelet',
      email: 'emilie@cirey.example',
      owner: 'u2',
      stage: 'lead',
      at: '2026-11-05T10:00:00.000Z',
    },
    {
      name: 'Katherine Johnson',
      email: 'kj_100%@nasa.example',
      owner: 'u3',
      stage: 'lead',
      at: '2026-11-04T10:00:00.000Z',
    },
  ];
  const ids = new Map<string, string>();

  const list = async (query: string, key = a.adminKey) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/people?${query}`, headers: bearer(key) });
    return { status: res.statusCode, body: res.json() as PageBody & { error?: { code: string } } };
  };
  const names = (body: PageBody) => body.data.map((r) => r.displayName);
  /** Every page of a query, following nextCursor. */
  const allPages = async (query: string): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const res = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...names(res.body).map(String));
      cursor = res.body.nextCursor;
      if (cursor === null) return seen;
    }
    throw new Error('paging did not end');
  };

  beforeAll(async () => {
    t = await startTestApp('records_search');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    for (const p of people) {
      const id = await insertEntity(t.prisma, {
        workspaceId: a.workspaceId,
        type: 'person',
        displayName: p.name,
        fields: { email: p.email, ownerId: p.owner, lifecycleStage: p.stage },
        updatedAt: p.at,
      });
      ids.set(p.name, id);
    }
    // Another workspace's Ada: never found by workspace A.
    await insertEntity(t.prisma, {
      workspaceId: b.workspaceId,
      type: 'person',
      displayName: 'Ada Byron',
      fields: { email: 'ada@byron.example', ownerId: 'u1' },
      updatedAt: '2026-11-01T09:00:00.000Z',
    });
    await insertEntity(t.prisma, {
      workspaceId: a.workspaceId,
      type: 'deal',
      displayName: 'Big deal',
      fields: { name: 'Big deal', stage: 'closedwon', ownerId: 'u1' },
      updatedAt: '2026-11-01T09:00:00.000Z',
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('finds text in the name, email or domain, without regard to case, within the workspace only', async () => {
    expect(names((await list('q=ADA')).body)).toEqual(['Ada Lovelace']);
    expect(names((await list('q=navy.example')).body)).toEqual(['Grace Hopper']);
    expect(names((await list('q=tur')).body)).toEqual(['alan turing']);
    expect((await list('q=byron')).body.data).toEqual([]);
    expect(names((await list('q=ada', b.adminKey)).body)).toEqual(['Ada Byron']);
  });

  it('matches a text of several words as a substring too: from inside a word, across words, exactly', async () => {
    const q = async (text: string) => names((await list(`q=${encodeURIComponent(text)}`)).body);
    expect(await q('da lov')).toEqual(['Ada Lovelace']);
    expect(await q('ace ada@analytical.ex')).toEqual(['Ada Lovelace']);
    expect(await q('ing alan@bl')).toEqual(['alan turing']);
    expect(await q('du ch')).toEqual(['Émilie du Châtelet']);
    expect(await q('lie du châtelet emilie@cirey')).toEqual(['Émilie du Châtelet']);
    // Each word is there, but not side by side: no substring, so no match.
    expect(await q('lovelace analytical')).toEqual([]);
    expect(await q('grace navy')).toEqual([]);
  });

  it('takes % and _ in the text literally', async () => {
    expect(names((await list(`q=${encodeURIComponent('_100%')}`)).body)).toEqual(['Katherine Johnson']);
    expect((await list(`q=${encodeURIComponent('%')}`)).body.data.map((r) => r.displayName)).toEqual([
      'Katherine Johnson',
    ]);
  });

  it('filters by owner, stage and last change, and combines filters', async () => {
    expect(new Set(names((await list('owner=u1')).body))).toEqual(new Set(['Ada Lovelace', 'alan turing']));
    expect(new Set(names((await list('stage=customer')).body))).toEqual(
      new Set(['Grace Hopper', 'alan turing']),
    );
    expect(names((await list('stage=customer&owner=u1')).body)).toEqual(['alan turing']);
    expect(new Set(names((await list('updatedSince=2026-11-04T10:00:00Z')).body))).toEqual(
      new Set(['Émilie du Châtelet', 'Katherine Johnson']),
    );
    const deals = await t.app.inject({
      method: 'GET',
      url: '/api/v1/deals?stage=closedwon',
      headers: bearer(a.adminKey),
    });
    expect((deals.json() as PageBody).data.map((d) => d.displayName)).toEqual(['Big deal']);
  });

  it('lists read together answer each as alone, in its own order; a failing one fails alone', async () => {
    const records = t.app.get(RecordsRepository);
    const asks: [string, Omit<EntityFilter, 'limit'> & { limit?: number }][] = [
      [a.workspaceId, { sort: 'name' }],
      [a.workspaceId, { sort: '-updatedAt' }],
      [a.workspaceId, { sort: 'updatedAt', owner: 'u1' }],
      [a.workspaceId, { sort: 'name', text: 'example', limit: 2 }],
      [a.workspaceId, { sort: 'id', text: 'a.example' }],
      [b.workspaceId, { sort: 'name' }],
      [a.workspaceId, { sort: 'name', text: 'nobody' }],
    ];
    const run = ([workspaceId, filter]: (typeof asks)[number]) =>
      records
        .list(workspaceId as WorkspaceId, 'person', { limit: 10, ...filter })
        .then((rows) => rows.map((r) => r.displayName));
    const alone: (string | null)[][] = [];
    for (const ask of asks) alone.push(await run(ask));
    expect(new Set(alone[0])).toEqual(new Set(people.map((p) => p.name)));
    expect(alone[1]![0]).toBe('Émilie du Châtelet');
    expect(alone[5]).toEqual(['Ada Byron']);
    // Asked in one turn, so read as one statement.
    expect(await Promise.all(asks.map(run))).toEqual(alone);

    const failing = records.list(a.workspaceId as WorkspaceId, 'person', {
      sort: 'name',
      updatedSince: new Date(Number.NaN),
      limit: 10,
    });
    const [good, bad] = await Promise.allSettled([run(asks[0]!), failing]);
    expect(good).toEqual({ status: 'fulfilled', value: alone[0] });
    expect(bad.status).toBe('rejected');
  });

  it('orders by last change both ways and by name, and pages through each order without gaps or repeats', async () => {
    const byTime = [...people].sort((x, y) => x.at.localeCompare(y.at)).map((p) => p.name);
    expect(await allPages('sort=updatedAt&limit=2')).toEqual(byTime);
    expect(await allPages('sort=-updatedAt&limit=2')).toEqual([...byTime].reverse());
    const byName = await allPages('sort=name&limit=2');
    expect(byName).toHaveLength(people.length);
    expect(new Set(byName)).toEqual(new Set(people.map((p) => p.name)));
    // Case does not split the order: "alan turing" sits between "Ada" and "Grace".
    expect(byName.indexOf('alan turing')).toBeGreaterThan(byName.indexOf('Ada Lovelace'));
    expect(byName.indexOf('alan turing')).toBeLessThan(byName.indexOf('Grace Hopper'));
    const byId = await allPages('limit=2');
    expect([...byId].sort()).toEqual(people.map((p) => p.name).sort());
  });

  it('refuses a cursor of another order, a cursor it never made, and a malformed time or sort', async () => {
    const first = await list('sort=-updatedAt&limit=1');
    expect(first.body.nextCursor).not.toBeNull();
    const mixed = await list(`sort=name&cursor=${first.body.nextCursor}`);
    expect([mixed.status, mixed.body.error?.code]).toEqual([400, 'validation_failed']);
    const forged = Buffer.from(JSON.stringify(['updatedAt', 'not a time', randomUUID()])).toString(
      'base64url',
    );
    expect((await list(`sort=updatedAt&cursor=${forged}`)).status).toBe(400);
    expect((await list('updatedSince=yesterday')).status).toBe(400);
    expect((await list('sort=email')).status).toBe(400);
  });
});
