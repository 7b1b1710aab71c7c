import { randomUUID } from 'node:crypto';
import type { EntityType, WorkspaceId } from '@syncline/core';
import type { PrismaClient } from '@syncline/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { RecordsRepository } from './records.repository';

interface RecordBody {
  id: string;
  type: string;
  displayName: string | null;
  fields: Record<string, unknown>;
  provenance: Record<string, unknown>;
  version: number;
  sourceLinks: { connectionId: string; provider: string | null; externalId: string; url: string | null }[];
  openConflicts: { id: string; field: string }[];
  mergedInto: string | null;
  flags: Record<string, unknown>;
  updatedAt: string;
}
interface PageBody {
  data: RecordBody[];
  nextCursor: string | null;
}

const RECORD_KEYS = [
  'associations',
  'deletedIn',
  'displayName',
  'fields',
  'flags',
  'id',
  'insights',
  'mergedInto',
  'openConflicts',
  'provenance',
  'sourceLinks',
  'type',
  'updatedAt',
  'version',
];

/** Ids in ascending order, so the tests can say which page holds which record. */
const sortedIds = (n: number): string[] => Array.from({ length: n }, () => randomUUID()).sort();

async function insertEntity(
  prisma: PrismaClient,
  row: {
    id: string;
    workspaceId: string;
    type: string;
    displayName?: string;
    fields?: object;
    provenance?: object;
    mergedInto?: string;
    version?: number;
    flags?: object;
  },
): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, provenance, merged_into, version, flags)
    VALUES (${row.id}::uuid, ${row.workspaceId}::uuid, ${row.type}, ${row.displayName ?? null},
            ${JSON.stringify(row.fields ?? {})}::jsonb, ${JSON.stringify(row.provenance ?? {})}::jsonb,
            ${row.mergedInto ?? null}::uuid, ${row.version ?? 1}, ${JSON.stringify(row.flags ?? {})}::jsonb)`;
}

describe('unified records', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let hubspotId: string;
  const [ada, bob, adaMerged, globexAda] = sortedIds(4) as [string, string, string, string];
  const acme = randomUUID();
  const deals = sortedIds(5);
  const conflictId = randomUUID();
  const eventTime = '2026-11-20T10:00:00.000Z';

  const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });

  beforeAll(async () => {
    t = await startTestApp('records');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    const connection = await t.prisma.connection.create({
      data: { workspaceId: a.workspaceId, provider: 'hubspot', externalAccountId: '4711' },
    });
    hubspotId = connection.id;

    await insertEntity(t.prisma, {
      id: ada,
      workspaceId: a.workspaceId,
      type: 'person',
      displayName: 'Ada Lovelace',
      fields: { email: 'Ada@Example.test', firstName: 'Ada', lastName: 'Lovelace' },
      provenance: {
        email: { source: { kind: 'connection', id: hubspotId }, eventTime, conflicted: false },
        firstName: { source: { kind: 'user', id: 'user-1' }, eventTime, conflicted: true },
      },
      version: 7,
      flags: { deletedIn: [] },
    });
    await insertEntity(t.prisma, {
      id: bob,
      workspaceId: a.workspaceId,
      type: 'person',
      displayName: 'Bob',
      fields: { email: 'bob@example.test', emails: ['bob@example.test', 'ADA.alt@Example.test'] },
    });
    await insertEntity(t.prisma, {
      id: adaMerged,
      workspaceId: a.workspaceId,
      type: 'person',
      fields: { email: 'ada@example.test' },
      mergedInto: ada,
    });
    await insertEntity(t.prisma, {
      id: globexAda,
      workspaceId: b.workspaceId,
      type: 'person',
      fields: { email: 'ada@example.test' },
    });
    await insertEntity(t.prisma, {
      id: acme,
      workspaceId: a.workspaceId,
      type: 'company',
      displayName: 'Acme',
      fields: { domain: 'Acme.test', name: 'Acme' },
    });
    for (const [index, id] of deals.entries()) {
      await insertEntity(t.prisma, {
        id,
        workspaceId: a.workspaceId,
        type: 'deal',
        fields: { name: `Deal ${index}` },
      });
    }
    await t.prisma.$executeRaw`
      INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
      VALUES (${a.workspaceId}::uuid, ${hubspotId}::uuid, 'person', '101', ${ada}::uuid)`;
    await t.prisma.$executeRaw`
      INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates, status)
      VALUES (${conflictId}::uuid, ${a.workspaceId}::uuid, ${ada}::uuid, 'firstName', 'concurrent', 'manual',
              ${JSON.stringify([{ value: 'Ada' }, { value: 'Augusta' }])}::jsonb, 'open'),
             (${randomUUID()}::uuid, ${a.workspaceId}::uuid, ${ada}::uuid, 'lastName', 'concurrent', 'lww',
              '[]'::jsonb, 'resolved')`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists people by email without regard to case, from email and emails, leaving merged records out', async () => {
    const res = await get(salesKey, '/api/v1/people?email=ADA@example.TEST');
    expect(res.statusCode).toBe(200);
    const body = res.json<PageBody>();
    expect(body.data.map((r) => r.id)).toEqual([ada]);
    expect(body.nextCursor).toBeNull();

    const alt = await get(a.adminKey, `/api/v1/people?email=${encodeURIComponent('ada.alt@example.test')}`);
    expect(alt.json<PageBody>().data.map((r) => r.id)).toEqual([bob]);

    const all = await get(a.adminKey, '/api/v1/people');
    expect(all.json<PageBody>().data.map((r) => r.id)).toEqual([ada, bob]);
  });

  it('gets read together answer each as alone: per workspace, per type, repeated, or not there', async () => {
    const records = t.app.get(RecordsRepository);
    const find = (workspaceId: string, type: EntityType, id: string) =>
      records.find(workspaceId as WorkspaceId, type, id);
    // Asked in one turn, so read as one batch.
    const found = await Promise.all([
      find(a.workspaceId, 'person', ada),
      find(b.workspaceId, 'person', globexAda),
      find(a.workspaceId, 'person', globexAda),
      find(b.workspaceId, 'person', ada),
      find(a.workspaceId, 'company', ada),
      find(a.workspaceId, 'company', acme),
      find(a.workspaceId, 'person', ada.toUpperCase()),
      find(a.workspaceId, 'person', randomUUID()),
      find(a.workspaceId, 'person', 'not-a-uuid'),
    ]);
    expect(found.map((r) => r?.id ?? null)).toEqual([
      ada,
      globexAda,
      null,
      null,
      null,
      acme,
      ada,
      null,
      null,
    ]);
    expect(found[0]!.sourceLinks.map((l) => l.externalId)).toEqual(['101']);
    expect(found[0]!.openConflicts.map((c) => c.id)).toEqual([conflictId]);
    expect(found[1]!.sourceLinks).toEqual([]);

    // A statement that fails (here a workspace id PostgreSQL cannot read) fails only its gets.
    const settled = await Promise.allSettled([
      find(a.workspaceId, 'person', ada),
      find('not-a-workspace', 'person', ada),
      find(b.workspaceId, 'person', globexAda),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled[0]).toMatchObject({ value: { id: ada } });
    expect(settled[2]).toMatchObject({ value: { id: globexAda } });

    const answers = await Promise.all(
      [
        get(a.adminKey, `/api/v1/people/${ada}`),
        get(b.adminKey, `/api/v1/people/${globexAda}`),
        get(a.adminKey, `/api/v1/people/${globexAda}`),
        get(b.adminKey, `/api/v1/people/${ada}`),
        get(a.adminKey, `/api/v1/companies/${acme}`),
        get(a.adminKey, `/api/v1/people/${acme}`),
      ].map(async (res) => {
        const answer = await res;
        return [answer.statusCode, answer.statusCode === 200 ? answer.json<RecordBody>().id : null];
      }),
    );
    expect(answers).toEqual([
      [200, ada],
      [200, globexAda],
      [404, null],
      [404, null],
      [200, acme],
      [404, null],
    ]);
  });

  it('reads a record with its fields, provenance, source links and open conflicts', async () => {
    const res = await get(salesKey, `/api/v1/people/${ada}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<RecordBody>();
    expect(Object.keys(body).sort()).toEqual(RECORD_KEYS);
    expect(body).toMatchObject({
      id: ada,
      type: 'person',
      displayName: 'Ada Lovelace',
      fields: { email: 'Ada@Example.test', firstName: 'Ada', lastName: 'Lovelace' },
      provenance: {
        email: { source: { kind: 'connection', id: hubspotId }, eventTime, conflicted: false },
        firstName: { source: { kind: 'user', id: 'user-1' }, eventTime, conflicted: true },
      },
      version: 7,
      sourceLinks: [
        {
          connectionId: hubspotId,
          provider: 'hubspot',
          externalId: '101',
          // The contact's page on its portal (4711), where a salesperson opens it in HubSpot.
          url: 'https://app.hubspot.com/contacts/4711/record/0-1/101',
        },
      ],
      mergedInto: null,
      deletedIn: [],
      flags: { deletedIn: [] },
    });
    expect(body.openConflicts).toEqual([
      {
        id: conflictId,
        field: 'firstName',
        kind: 'concurrent',
        policy: 'manual',
        candidates: [{ value: 'Ada' }, { value: 'Augusta' }],
        createdAt: expect.any(String),
      },
    ]);
  });

  it('reads a merged record as the record it was merged into', async () => {
    const res = await get(a.adminKey, `/api/v1/people/${adaMerged}`);
    expect(res.statusCode).toBe(200);
    expect(res.json<RecordBody>()).toMatchObject({ id: ada, mergedInto: null });
    expect(res.headers['content-location']).toBe(`/api/v1/people/${ada}`);
  });

  it('filters companies by domain; other collections do not hold the type', async () => {
    const res = await get(a.adminKey, '/api/v1/companies?domain=ACME.test');
    expect(res.json<PageBody>().data.map((r) => [r.id, r.type])).toEqual([[acme, 'company']]);
    expect((await get(a.adminKey, `/api/v1/people/${acme}`)).statusCode).toBe(404);
    expect((await get(a.adminKey, `/api/v1/companies/${acme}`)).statusCode).toBe(200);
    for (const collection of ['meetings', 'tasks', 'email-activities']) {
      const list = await get(a.adminKey, `/api/v1/${collection}`);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual({ data: [], nextCursor: null });
    }
  });

  it("another workspace's record is 404, and its rows never show up", async () => {
    const res = await get(b.adminKey, `/api/v1/people/${ada}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const mine = await get(b.adminKey, '/api/v1/people?email=ada@example.test');
    expect(mine.json<PageBody>().data.map((r) => r.id)).toEqual([globexAda]);
    const missing = await get(a.adminKey, `/api/v1/people/${randomUUID()}`);
    expect(missing.statusCode).toBe(404);
  });

  it('pages by cursor, in id order, without overlap', async () => {
    const seen: string[] = [];
    let url = '/api/v1/deals?limit=2';
    const sizes: number[] = [];
    for (let page = 0; page < 5; page++) {
      const res = await get(a.adminKey, url);
      expect(res.statusCode).toBe(200);
      const body = res.json<PageBody>();
      sizes.push(body.data.length);
      seen.push(...body.data.map((r) => r.id));
      if (body.nextCursor === null) break;
      url = `/api/v1/deals?limit=2&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(deals);
  });

  it('400 validation_failed for a bad cursor, limit or id', async () => {
    for (const url of [
      '/api/v1/deals?cursor=not-a-cursor',
      `/api/v1/deals?cursor=${Buffer.from('1 OR 1=1').toString('base64url')}`,
      '/api/v1/deals?limit=0',
      '/api/v1/deals?limit=1000',
      '/api/v1/people/not-a-uuid',
    ]) {
      const res = await get(a.adminKey, url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
    }
  });

  it("counts what waits for a person in the workspace's inbox, and nothing of another's", async () => {
    // Two open pairs and a dismissed one in Acme; the seeded conflicts are one open, one resolved.
    await t.prisma.$executeRaw`
      INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence, status)
      VALUES (${randomUUID()}::uuid, ${a.workspaceId}::uuid, 'person', ${ada}::uuid, ${bob}::uuid, 0.8, '[]'::jsonb, 'open'),
             (${randomUUID()}::uuid, ${a.workspaceId}::uuid, 'person', ${bob}::uuid, ${adaMerged}::uuid, 0.7, '[]'::jsonb, 'open'),
             (${randomUUID()}::uuid, ${a.workspaceId}::uuid, 'person', ${ada}::uuid, ${adaMerged}::uuid, 0.6, '[]'::jsonb, 'dismissed')`;
    const acme = await get(salesKey, '/api/v1/inbox-counts');
    expect(acme.statusCode).toBe(200);
    expect(acme.json()).toEqual({ openConflicts: 1, openDuplicates: 2 });
    expect((await get(b.adminKey, '/api/v1/inbox-counts')).json()).toEqual({
      openConflicts: 0,
      openDuplicates: 0,
    });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/inbox-counts' })).statusCode).toBe(401);
  });

  it('needs an API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/people' });
    expect(res.statusCode).toBe(401);
  });
});
