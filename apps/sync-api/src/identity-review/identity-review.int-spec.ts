import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { SourceChangeInput } from '@syncline/core';
import { dismissOperationId, IdentityService } from '@syncline/identity';
import { ChangeLog, LogConsumer } from '@syncline/log';
// The real sync stage, so that a merge is applied the way the workers apply it.
import { SyncStage } from '@syncline/sync-stage';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNC_CONSUMER_GROUP } from '../connections/connections.repository';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface RecordBody {
  id: string;
  fields: Record<string, unknown>;
  provenance: Record<string, { source: { kind: string; id: string } }>;
  sourceLinks: { connectionId: string; externalId: string; linkedBecause: unknown }[];
  mergedInto: string | null;
}
interface DuplicateBody {
  id: string;
  entityType: string;
  status: string;
  score: number;
  evidence: unknown[];
  priority: number;
  a: { id: string; displayName: string | null; fields: Record<string, unknown>; sourceLinks: unknown[] };
  b: { id: string; displayName: string | null; fields: Record<string, unknown>; sourceLinks: unknown[] };
  reviewedBy: string | null;
  reviewedAt: string | null;
}
interface OperationBody {
  id: string;
  kind: string;
  status: string;
  survivor: { id: string } | null;
  absorbed: { id: string } | null;
  undoes: string | null;
  requestedBy: string | null;
}
interface ErrorBody {
  error: { code: string; message: string };
}

const waitFor = async <T>(what: string, read: () => Promise<T | undefined>, ms = 15_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/**
 * Identity review through the API, with the real sync stage consuming the log: possible
 * duplicates listed and dismissed, records merged (answered once merged) and unmerged, and
 * every refusal with its code; another workspace's keys find none of it.
 */
describe('identity review', () => {
  let t: TestApp;
  let pool: Pool;
  let log: ChangeLog;
  let consumer: LogConsumer | undefined;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let salesKeyId: string;
  let crmA: string;
  let crmB: string;
  let ada: string; // Ada in CRM A: the survivor
  let augusta: string; // Ada in CRM B, another address: the possible duplicate
  let pair: string;
  let acme: string;
  let globexPerson: string;
  let mergeId: string;
  const t0 = Date.now() - 60_000;
  const phone = '+44 20 7946 0000';

  const call = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  const startStage = async () => {
    const engine = new MergeEngine(new PgMergeStore(pool));
    const handler = new SyncStage({ identity: new IdentityService(), engine, connectionsTtlMs: 0 });
    consumer = new LogConsumer({
      group: SYNC_CONSUMER_GROUP,
      partitions: t.config.LOG_PARTITIONS,
      connection: t.db.url,
      pollMs: 50,
      rebalanceMs: 200,
      handler: async (tx, events) => {
        await handler.handle(tx, events);
      },
    });
    await consumer.start();
  };
  const stopStage = async () => {
    await consumer?.stop();
    consumer = undefined;
  };

  const contact = (
    connectionId: string,
    externalId: string,
    at: number,
    fields: object,
  ): SourceChangeInput => ({
    workspaceId: a.workspaceId,
    connectionId,
    entityType: 'person',
    externalId,
    op: 'upsert',
    eventKey: `contacts:${externalId}:${at}`,
    eventTime: new Date(t0 + at * 1000),
    fields: fields as Record<string, unknown>,
  });
  const entityOf = (connectionId: string, externalId: string) =>
    waitFor(`${externalId} linked`, async () => {
      const rows = await t.prisma.$queryRaw<{ entity_id: string }[]>`
        SELECT entity_id::text FROM source_link
         WHERE connection_id = ${connectionId}::uuid AND external_id = ${externalId}`;
      return rows[0]?.entity_id;
    });
  const insertEntity = async (workspaceId: string, type: string, name: string) => {
    const id = randomUUID();
    await t.prisma.$executeRaw`
      INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version)
      VALUES (${id}::uuid, ${workspaceId}::uuid, ${type}, ${name}, ${JSON.stringify({ name })}::jsonb, 1)`;
    return id;
  };
  const pending = async (connectionId: string) =>
    t.prisma.$queryRaw<{ entity_id: string; fields: Record<string, unknown> }[]>`
      SELECT entity_id::text, fields FROM outbox WHERE connection_id = ${connectionId}::uuid AND status = 'pending'
       ORDER BY id`;

  beforeAll(async () => {
    t = await startTestApp('identity_review');
    pool = new Pool({ connectionString: t.db.url, max: 3 });
    log = new ChangeLog(pool, { partitions: t.config.LOG_PARTITIONS });
    await log.init();
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    const me = await call(salesKey, 'GET', '/api/v1/me');
    salesKeyId = me.json<{ apiKeyId: string }>().apiKeyId;
    const connection = async (account: string) =>
      (
        await t.prisma.connection.create({
          data: {
            workspaceId: a.workspaceId,
            provider: 'hubspot',
            externalAccountId: account,
            status: 'live',
          },
        })
      ).id;
    crmA = await connection('portal-a');
    crmB = await connection('portal-b');
    await startStage();
    // The same name from two CRMs, nothing else in common: two people and a possible duplicate.
    const appended = await log.append([
      contact(crmB, 'b-1', 0, {
        email: 'augusta@byron.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone,
      }),
      contact(crmA, 'a-1', 1, {
        email: 'ada@analytical.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        jobTitle: 'CTO',
      }),
    ]);
    if (!appended.ok) throw new Error(appended.error.message);
    ada = await entityOf(crmA, 'a-1');
    augusta = await entityOf(crmB, 'b-1');
    pair = await waitFor('the possible duplicate', async () => {
      const rows = await t.prisma.$queryRaw<{ id: string }[]>`
        SELECT id::text FROM possible_duplicate WHERE workspace_id = ${a.workspaceId}::uuid`;
      return rows[0]?.id;
    });
    acme = await insertEntity(a.workspaceId, 'company', 'Acme');
    globexPerson = await insertEntity(b.workspaceId, 'person', 'Globex person');
  }, 60_000);

  afterAll(async () => {
    await stopStage();
    await log?.close();
    await pool?.end();
    await t?.close();
  });

  it('lists open possible duplicates of a type, with both records, the evidence and the score', async () => {
    const res = await call(salesKey, 'GET', '/api/v1/possible-duplicates?entityType=person&status=open');
    expect(res.statusCode).toBe(200);
    const { data, nextCursor } = res.json<{ data: DuplicateBody[]; nextCursor: string | null }>();
    expect(nextCursor).toBeNull();
    expect(data).toHaveLength(1);
    const [row] = data;
    expect(row).toMatchObject({ id: pair, entityType: 'person', status: 'open', reviewedBy: null });
    expect([row?.a.id, row?.b.id].sort()).toEqual([ada, augusta].sort());
    const augustaSide = row?.a.id === augusta ? row.a : row?.b;
    expect(augustaSide?.fields).toMatchObject({ email: 'augusta@byron.example', phone });
    expect(augustaSide?.sourceLinks).toEqual([
      { connectionId: crmB, provider: 'hubspot', externalId: 'b-1' },
    ]);
    expect(row?.evidence.length).toBeGreaterThan(0);
    expect(row?.score).toBeGreaterThan(0);
    expect(row?.score).toBeLessThan(1);
    // Other types and other workspaces have none.
    const companies = await call(salesKey, 'GET', '/api/v1/possible-duplicates?entityType=company');
    expect(companies.json<{ data: unknown[] }>().data).toEqual([]);
    const globex = await call(b.adminKey, 'GET', '/api/v1/possible-duplicates');
    expect(globex.json<{ data: unknown[] }>().data).toEqual([]);
    expect((await call(b.adminKey, 'GET', `/api/v1/possible-duplicates/${pair}`)).statusCode).toBe(404);
  });

  it('pages newest first with a cursor', async () => {
    const x = await insertEntity(a.workspaceId, 'person', 'Page one');
    const y = await insertEntity(a.workspaceId, 'person', 'Page two');
    const newer = randomUUID();
    await t.prisma.$executeRaw`
      INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence, created_at)
      VALUES (${newer}::uuid, ${a.workspaceId}::uuid, 'person', ${x}::uuid, ${y}::uuid, 0.8, '["name"]'::jsonb,
              now() + interval '1 minute')`;
    const first = await call(salesKey, 'GET', '/api/v1/possible-duplicates?limit=1&sort=newest');
    const page1 = first.json<{ data: DuplicateBody[]; nextCursor: string | null }>();
    expect(page1.data.map((d) => d.id)).toEqual([newer]);
    expect(page1.nextCursor).not.toBeNull();
    const second = await call(
      salesKey,
      'GET',
      `/api/v1/possible-duplicates?limit=1&sort=newest&cursor=${page1.nextCursor}`,
    );
    const page2 = second.json<{ data: DuplicateBody[]; nextCursor: string | null }>();
    expect(page2.data.map((d) => d.id)).toEqual([pair]);
    expect(page2.nextCursor).toBeNull();
    const bad = await call(salesKey, 'GET', '/api/v1/possible-duplicates?cursor=nonsense');
    expect([bad.statusCode, bad.json<ErrorBody>().error.code]).toEqual([400, 'validation_failed']);
    // A cursor continues only the order it was made under.
    const other = await call(salesKey, 'GET', `/api/v1/possible-duplicates?cursor=${page1.nextCursor}`);
    expect([other.statusCode, other.json<ErrorBody>().error.code]).toEqual([400, 'validation_failed']);

    // By default, what most deserves a person's time first: a key that says they are one, then
    // corroborated names, then a name alone, and last two records one CRM keeps apart.
    const weighed: [string, number, string[]][] = [
      [randomUUID(), 1, ['name-similarity:1.000', 'same-connection']],
      [randomUUID(), 0.8, ['name-similarity:0.800', 'same-organisation-domain', 'same-phone']],
      [randomUUID(), 1, ['email:x@y.example', 'conflicting-deterministic-key']],
    ];
    for (const [id, score, evidence] of weighed) {
      const [p, q] = [
        await insertEntity(a.workspaceId, 'person', 'P'),
        await insertEntity(a.workspaceId, 'person', 'Q'),
      ];
      await t.prisma.$executeRaw`
        INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence)
        VALUES (${id}::uuid, ${a.workspaceId}::uuid, 'person', ${p}::uuid, ${q}::uuid, ${score}, ${JSON.stringify(evidence)}::jsonb)`;
    }
    const ranked: DuplicateBody[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(
        salesKey,
        'GET',
        `/api/v1/possible-duplicates?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      const body = res.json<{ data: DuplicateBody[]; nextCursor: string | null }>();
      ranked.push(...body.data);
      cursor = body.nextCursor;
    } while (cursor !== null);
    const ids = ranked.map((d) => d.id);
    expect(ids).toHaveLength(5);
    expect([ids[0], ids[1], ids[4]]).toEqual([weighed[2]![0], weighed[1]![0], weighed[0]![0]]);
    expect(ids.slice(2, 4).sort()).toEqual([newer, pair].sort());
    const priorities = ranked.map((d) => d.priority);
    expect([priorities[0], priorities[1], priorities[4]]).toEqual([1.5, 0.9, 0.7]);
    expect([...priorities].sort((x, y) => y - x)).toEqual(priorities);
    for (const [id] of weighed)
      await t.prisma.$executeRaw`DELETE FROM possible_duplicate WHERE id = ${id}::uuid`;

    // Not the same: dismissed with who said so, never listed as open again; dismissing again is one dismissal.
    const dismissed = await call(salesKey, 'POST', `/api/v1/possible-duplicates/${newer}/dismiss`);
    expect(dismissed.statusCode).toBe(200);
    expect(dismissed.json<DuplicateBody>()).toMatchObject({ id: newer, status: 'dismissed' });
    expect(dismissed.json<DuplicateBody>().reviewedBy).toBe(salesKeyId);
    expect(dismissed.json<DuplicateBody>().reviewedAt).not.toBeNull();
    expect((await call(salesKey, 'POST', `/api/v1/possible-duplicates/${newer}/dismiss`)).statusCode).toBe(
      200,
    );
    // On the log once, under the workspace's own connection, for a fold of the log to dismiss again.
    const onLog = await t.prisma.$queryRaw<{ op: string; fields: { identityOperation: object } }[]>`
      SELECT op::text AS op, fields FROM change_event
       WHERE workspace_id = ${a.workspaceId}::uuid
         AND event_key = ${`identity-operation:${dismissOperationId(a.workspaceId, newer)}`}`;
    expect(onLog).toEqual([
      {
        op: 'merge',
        fields: {
          identityOperation: expect.objectContaining({
            kind: 'dismiss',
            duplicateId: newer,
            requestedBy: salesKeyId,
          }),
        },
      },
    ]);
    const open = await call(salesKey, 'GET', '/api/v1/possible-duplicates');
    expect(open.json<{ data: DuplicateBody[] }>().data.map((d) => d.id)).toEqual([pair]);
    const gone = await call(salesKey, 'GET', '/api/v1/possible-duplicates?status=dismissed');
    expect(gone.json<{ data: DuplicateBody[] }>().data.map((d) => d.id)).toEqual([newer]);
    // Another workspace cannot dismiss it.
    expect((await call(b.adminKey, 'POST', `/api/v1/possible-duplicates/${pair}/dismiss`)).statusCode).toBe(
      404,
    );
  });

  it('refuses merges that cannot be, each with its code, and appends nothing for them', async () => {
    const before = await t.prisma.changeEvent.count({ where: { workspaceId: a.workspaceId } });
    const refusal = async (key: string, url: string, payload: object) => {
      const res = await call(key, 'POST', url, payload);
      return [res.statusCode, res.json<ErrorBody>().error.code];
    };
    expect(await refusal(salesKey, `/api/v1/people/${ada}/merge`, { absorbedId: ada })).toEqual([
      400,
      'same_record',
    ]);
    expect(await refusal(salesKey, `/api/v1/people/${ada}/merge`, { absorbedId: acme })).toEqual([
      400,
      'type_mismatch',
    ]);
    expect(await refusal(salesKey, `/api/v1/people/${ada}/merge`, { absorbedId: randomUUID() })).toEqual([
      404,
      'not_found',
    ]);
    expect(await refusal(salesKey, `/api/v1/people/${acme}/merge`, { absorbedId: ada })).toEqual([
      404,
      'not_found',
    ]);
    expect(await refusal(salesKey, `/api/v1/people/${ada}/merge`, { ada })).toEqual([
      400,
      'validation_failed',
    ]);
    // Another workspace's records do not exist for this one, either way round.
    expect(await refusal(b.adminKey, `/api/v1/people/${ada}/merge`, { absorbedId: augusta })).toEqual([
      404,
      'not_found',
    ]);
    expect(await refusal(salesKey, `/api/v1/people/${ada}/merge`, { absorbedId: globexPerson })).toEqual([
      404,
      'not_found',
    ]);
    expect(await t.prisma.changeEvent.count({ where: { workspaceId: a.workspaceId } })).toBe(before);
  });

  it('merges: answers with the merged record once applied; the absorbed id reads as the survivor', async () => {
    const res = await call(salesKey, 'POST', `/api/v1/people/${ada}/merge`, { absorbedId: augusta });
    expect(res.statusCode).toBe(200);
    mergeId = String(res.headers['operation-id']);
    const merged = res.json<RecordBody>();
    expect(merged.id).toBe(ada);
    // A's later values win what both had; B's phone, which only it had, is taken, credited to B.
    expect(merged.fields).toMatchObject({ email: 'ada@analytical.example', jobTitle: 'CTO', phone });
    expect(merged.provenance.phone?.source).toMatchObject({ kind: 'connection', id: crmB });
    expect(merged.sourceLinks.map((l) => l.connectionId).sort()).toEqual([crmA, crmB].sort());
    expect(res.headers.etag).toBeDefined();
    // Why each record is here: A's began the record; B's came by this person's merge.
    const because = Object.fromEntries(merged.sourceLinks.map((l) => [l.connectionId, l.linkedBecause]));
    expect(because[crmA]).toEqual({ rule: 'created', evidence: expect.any(Array), score: 1 });
    expect(because[crmB]).toMatchObject({
      rule: 'created',
      joinedBy: [{ operationId: mergeId, rule: 'person-merge', evidence: [`by:${salesKeyId}`], score: 1 }],
    });

    // The record's history says how it came to be one: both links and the merge, with why.
    const history = await call(salesKey, 'GET', `/api/v1/people/${ada}/history`);
    const identity = history.json<{ identity: { kind: string; because: { rule: string } | null }[] }>()
      .identity;
    expect(identity[0]).toMatchObject({
      kind: 'merge',
      operationId: mergeId,
      survivorId: ada,
      absorbedId: augusta,
      because: { rule: 'person-merge', evidence: [`by:${salesKeyId}`] },
      undone: false,
    });
    expect(identity.filter((e) => e.kind === 'linked')).toHaveLength(2);
    expect(identity.filter((e) => e.kind === 'linked').map((e) => e.because?.rule)).toEqual([
      'created',
      'created',
    ]);

    const read = await call(salesKey, 'GET', `/api/v1/people/${augusta}`);
    expect(read.statusCode).toBe(200);
    expect(read.json<RecordBody>().id).toBe(ada);
    expect(read.headers['content-location']).toBe(`/api/v1/people/${ada}`);
    // Each CRM is owed the union.
    expect((await pending(crmA)).at(-1)).toEqual({ entity_id: ada, fields: { phone } });
    expect((await pending(crmB)).at(-1)).toEqual({
      entity_id: ada,
      fields: { email: 'ada@analytical.example', jobTitle: 'CTO' },
    });
    // The suggestion is settled, and the operation can be read.
    const settled = await call(salesKey, 'GET', `/api/v1/possible-duplicates/${pair}`);
    expect(settled.json<DuplicateBody>().status).toBe('merged');
    const op = await call(salesKey, 'GET', `/api/v1/identity-operations/${mergeId}`);
    expect(op.json<OperationBody>()).toMatchObject({
      id: mergeId,
      kind: 'merge',
      status: 'applied',
      survivor: { id: ada },
      absorbed: { id: augusta },
      requestedBy: salesKeyId,
    });
    const listed = await call(salesKey, 'GET', `/api/v1/identity-operations?recordId=${augusta}`);
    expect(listed.json<{ data: OperationBody[] }>().data.map((o) => o.id)).toEqual([mergeId]);
    expect((await call(b.adminKey, 'GET', `/api/v1/identity-operations/${mergeId}`)).statusCode).toBe(404);
    expect(
      (await call(b.adminKey, 'GET', '/api/v1/identity-operations')).json<{ data: unknown[] }>().data,
    ).toEqual([]);
  });

  it('refuses merging what is merged already, and dismissing a merged pair', async () => {
    for (const [url, absorbedId] of [
      [`/api/v1/people/${ada}/merge`, augusta],
      [`/api/v1/people/${augusta}/merge`, ada],
    ] as const) {
      const res = await call(salesKey, 'POST', url, { absorbedId });
      expect([res.statusCode, res.json<ErrorBody>().error.code]).toEqual([409, 'already_merged']);
    }
    const dismiss = await call(salesKey, 'POST', `/api/v1/possible-duplicates/${pair}/dismiss`);
    expect([dismiss.statusCode, dismiss.json<ErrorBody>().error.code]).toEqual([409, 'already_merged']);
  });

  it('unmerges: both records come back with their systems, each owed its own values', async () => {
    expect(
      (await call(b.adminKey, 'POST', `/api/v1/identity-operations/${mergeId}/unmerge`)).statusCode,
    ).toBe(404);
    const res = await call(salesKey, 'POST', `/api/v1/identity-operations/${mergeId}/unmerge`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ operationId: string; survivor: RecordBody; restored: RecordBody }>();
    expect(body.operationId).toBe(res.headers['operation-id']);
    expect(body.survivor.id).toBe(ada);
    expect(body.survivor.fields).toMatchObject({ email: 'ada@analytical.example', phone: null });
    expect(body.restored).toMatchObject({ id: augusta, mergedInto: null });
    expect(body.restored.fields).toMatchObject({ email: 'augusta@byron.example', phone });
    expect(body.restored.sourceLinks.map((l) => l.connectionId)).toEqual([crmB]);
    expect((await call(salesKey, 'GET', `/api/v1/people/${augusta}`)).json<RecordBody>().id).toBe(augusta);
    const settled = await call(salesKey, 'GET', `/api/v1/possible-duplicates/${pair}`);
    expect(settled.json<DuplicateBody>().status).toBe('open');
    const op = await call(salesKey, 'GET', `/api/v1/identity-operations/${mergeId}`);
    expect(op.json<OperationBody>().status).toBe('undone');

    const again = await call(salesKey, 'POST', `/api/v1/identity-operations/${mergeId}/unmerge`);
    expect([again.statusCode, again.json<ErrorBody>().error.code]).toEqual([409, 'already_undone']);
    const ofUnmerge = await call(salesKey, 'POST', `/api/v1/identity-operations/${body.operationId}/unmerge`);
    expect([ofUnmerge.statusCode, ofUnmerge.json<ErrorBody>().error.code]).toEqual([409, 'not_a_merge']);
    const unknown = await call(salesKey, 'POST', `/api/v1/identity-operations/${randomUUID()}/unmerge`);
    expect([unknown.statusCode, unknown.json<ErrorBody>().error.code]).toEqual([404, 'not_found']);
  });

  it('answers 202 with the operation id when the sync stage is behind, and the merge applies later', async () => {
    await stopStage();
    try {
      const res = await call(salesKey, 'POST', `/api/v1/people/${ada}/merge`, { absorbedId: augusta });
      expect(res.statusCode).toBe(202);
      const { operationId } = res.json<{ accepted: true; operationId: string }>();
      const op = await call(salesKey, 'GET', `/api/v1/identity-operations/${operationId}`);
      expect(op.json<OperationBody>()).toMatchObject({ id: operationId, kind: 'merge', status: 'pending' });
      const early = await call(salesKey, 'POST', `/api/v1/identity-operations/${operationId}/unmerge`);
      expect([early.statusCode, early.json<ErrorBody>().error.code]).toEqual([409, 'not_applied']);
      await startStage();
      await waitFor('the merge applied', async () => {
        const now = await call(salesKey, 'GET', `/api/v1/identity-operations/${operationId}`);
        return now.json<OperationBody>().status === 'applied' ? true : undefined;
      });
      expect((await call(salesKey, 'GET', `/api/v1/people/${augusta}`)).json<RecordBody>().id).toBe(ada);
    } finally {
      if (consumer === undefined) await startStage();
    }
  });

  it('answers 202 with the pair still open when the sync stage is behind, and the dismissal applies later', async () => {
    const id = randomUUID();
    const [p, q] = [
      await insertEntity(a.workspaceId, 'person', 'R'),
      await insertEntity(a.workspaceId, 'person', 'S'),
    ];
    await t.prisma.$executeRaw`
      INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence)
      VALUES (${id}::uuid, ${a.workspaceId}::uuid, 'person', ${p}::uuid, ${q}::uuid, 0.6, '[]'::jsonb)`;
    await stopStage();
    try {
      const res = await call(salesKey, 'POST', `/api/v1/possible-duplicates/${id}/dismiss`);
      expect([res.statusCode, res.json<DuplicateBody>().status]).toEqual([202, 'open']);
      await startStage();
      const dismissed = await waitFor('the dismissal applied', async () => {
        const now = await call(salesKey, 'GET', `/api/v1/possible-duplicates/${id}`);
        return now.json<DuplicateBody>().status === 'dismissed' ? now.json<DuplicateBody>() : undefined;
      });
      expect(dismissed.reviewedBy).toBe(salesKeyId);
    } finally {
      if (consumer === undefined) await startStage();
    }
  });

  it('a retried merge with the same Idempotency-Key is one operation', async () => {
    const x = await insertEntity(a.workspaceId, 'company', 'Initech');
    const y = await insertEntity(a.workspaceId, 'company', 'Initech Inc');
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/companies/${x}/merge`,
        headers: { ...bearer(salesKey), 'idempotency-key': 'merge-initech' },
        payload: { absorbedId: y },
      });
    const first = await send();
    expect(first.statusCode).toBe(200);
    const second = await send();
    expect(second.statusCode).toBe(200);
    expect(second.headers['operation-id']).toBe(first.headers['operation-id']);
    const ops = await t.prisma.identityOperation.count({
      where: { workspaceId: a.workspaceId, kind: 'merge' },
    });
    expect(ops).toBe(3);
  });
});
