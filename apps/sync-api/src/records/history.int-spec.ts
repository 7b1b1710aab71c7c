import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { IdentityService } from '@syncline/identity';
import { ChangeLog, LogConsumer } from '@syncline/log';
// The workers' sync stage itself, run in-process as a member of the `sync` group: the
// history is only right if it is right for what the real merge writes.
import { SyncStage } from '@syncline/sync-stage';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNC_CONSUMER_GROUP } from '../connections/connections.repository';
import { signInAs } from '../testing/sign-in';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface HistoryBody {
  recordId: string;
  data: {
    id: string;
    at: string;
    source: {
      kind: string;
      id: string;
      provider: string | null;
      name: string | null;
      label: string | null;
      actorKind: string | null;
    };
    fields: Record<string, { value: unknown; eventTime: string }>;
    conflictResolution: boolean;
    conflictId: string | null;
  }[];
  nextCursor: string | null;
}
interface AsOfBody {
  id: string;
  type: string;
  at: string;
  fields: Record<string, unknown>;
  provenance: Record<
    string,
    {
      source: { kind: string; id: string; label: string | null; actorKind: string | null };
      eventTime: string;
      conflicted: boolean;
    }
  >;
}

/**
 * A person reported by two CRMs, edited by a salesperson and with a conflict settled in the
 * inbox, all through the change log and the real sync stage; then read back as history and
 * as of earlier times.
 */
describe('record history and past states', () => {
  let t: TestApp;
  let pool: Pool;
  let consumer: LogConsumer;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let salesKeyId: string;
  let crmA: string;
  let crmB: string;
  let ada: string;
  let conflictId: string;
  const undocumented = randomUUID();
  // Whole seconds: a change's time is kept to the second.
  const t0 = Math.floor((Date.now() - 2 * 3600_000) / 1000) * 1000;
  const at = (minutes: number) => new Date(t0 + minutes * 60_000);
  const contact = { email: 'ada@analytical.test', firstName: 'Ada', lastName: 'Lovelace' };

  const call = (key: string, method: 'GET' | 'PATCH' | 'POST', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
  const history = async (key: string, query = '') =>
    call(key, 'GET', `/api/v1/people/${ada}/history${query}`);
  const asOf = (key: string, time: string) =>
    call(key, 'GET', `/api/v1/people/${ada}/as-of?at=${encodeURIComponent(time)}`);

  /** A CRM reports the contact; resolves once the sync stage has merged it. */
  async function report(connectionId: string, when: Date, fields: Record<string, unknown>): Promise<void> {
    const appended = await t.app.get(ChangeLog).append([
      {
        workspaceId: a.workspaceId,
        connectionId,
        entityType: 'person',
        externalId: `contact-${connectionId}`,
        op: 'upsert',
        eventKey: `contacts:${when.getTime()}`,
        eventTime: when,
        fields,
      },
    ]);
    if (!appended.ok) throw new Error(appended.error.message);
    const [{ partition, offset } = { partition: 0, offset: null }] = appended.value;
    if (offset === null) throw new Error('the report was taken for a duplicate');
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await pool.query<{ done: boolean }>(
        'SELECT committed_offset >= $3 AS done FROM consumer_offset WHERE group_name = $1 AND partition = $2',
        [SYNC_CONSUMER_GROUP, partition, offset],
      );
      if (rows[0]?.done) return;
      if (Date.now() > deadline) throw new Error('the sync stage did not merge the report');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  beforeAll(async () => {
    t = await startTestApp('history');
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'Dana');
    salesKeyId = (
      await t.prisma.apiKey.findFirstOrThrow({ where: { workspaceId: a.workspaceId, name: 'Dana' } })
    ).id;
    const connection = async (portal: string, displayName: string) =>
      (
        await t.prisma.connection.create({
          data: {
            workspaceId: a.workspaceId,
            provider: 'hubspot',
            externalAccountId: portal,
            displayName,
            status: 'live',
          },
        })
      ).id;
    crmA = await connection('portal-a', 'CRM A');
    crmB = await connection('portal-b', 'CRM B');
    // Concurrent job titles wait for a person.
    await t.prisma.$executeRaw`
      INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
      VALUES (${a.workspaceId}::uuid, 'person', '{"jobTitle": {"kind": "manual"}}', 1)`;
    await t.prisma.$executeRaw`
      INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version)
      VALUES (${undocumented}::uuid, ${a.workspaceId}::uuid, 'person', 'No document', '{"note":"x"}'::jsonb, 1)`;

    const handler = new SyncStage({
      identity: new IdentityService(),
      engine: new MergeEngine(new PgMergeStore(pool)),
      connectionsTtlMs: 0,
    });
    consumer = new LogConsumer({
      group: SYNC_CONSUMER_GROUP,
      partitions: t.config.LOG_PARTITIONS,
      connection: t.db.url,
      pollMs: 50,
      handler: async (tx, events) => {
        await handler.handle(tx, events);
      },
    });
    await consumer.start();

    // CRM B has not seen CRM A's record: their job titles are concurrent, an open conflict.
    await report(crmA, at(0), { ...contact, jobTitle: 'Analyst' });
    await report(crmB, at(5), { ...contact, jobTitle: 'Engineer', phone: '+44 20 7946 0000' });
    const links = await t.prisma.$queryRaw<{ entity_id: string }[]>`
      SELECT DISTINCT entity_id::text FROM source_link WHERE workspace_id = ${a.workspaceId}::uuid`;
    expect(links).toHaveLength(1);
    ada = links[0]!.entity_id;

    const edit = await call(salesKey, 'PATCH', `/api/v1/people/${ada}`, {
      fields: { phone: '+44 20 7946 0999' },
    });
    expect(edit.statusCode, edit.body).toBe(200);
    const open = await call(salesKey, 'GET', `/api/v1/conflicts?recordId=${ada}`);
    const conflicts = open.json<{ data: { id: string; field: string }[] }>().data;
    expect(conflicts.map((c) => c.field)).toEqual(['jobTitle']);
    conflictId = conflicts[0]!.id;
    const resolved = await call(salesKey, 'POST', `/api/v1/conflicts/${conflictId}/resolve`, {
      value: 'Engineer',
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
  });
  afterAll(async () => {
    await consumer?.stop();
    await pool?.end();
    await t?.close();
  });

  it('lists every change newest first, each with its origin, its fields and whether it settled a conflict', async () => {
    const res = await history(salesKey);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<HistoryBody>();
    expect(body.recordId).toBe(ada);
    expect(body.nextCursor).toBeNull();
    const dana = {
      kind: 'user',
      id: salesKeyId,
      provider: null,
      name: 'Dana',
      label: 'Dana',
      actorKind: 'apiKey',
    };
    expect(body.data.map((c) => [c.source, c.conflictResolution, c.conflictId])).toEqual([
      [dana, true, conflictId],
      [dana, false, null],
      [
        {
          kind: 'connection',
          id: crmB,
          provider: 'hubspot',
          name: 'CRM B',
          label: 'CRM B',
          actorKind: null,
        },
        false,
        null,
      ],
      [
        {
          kind: 'connection',
          id: crmA,
          provider: 'hubspot',
          name: 'CRM A',
          label: 'CRM A',
          actorKind: null,
        },
        false,
        null,
      ],
    ]);
    const values = (fields: HistoryBody['data'][number]['fields']) =>
      Object.fromEntries(Object.entries(fields).map(([field, set]) => [field, set.value]));
    expect(body.data.map((c) => values(c.fields))).toEqual([
      { jobTitle: 'Engineer' },
      { phone: '+44 20 7946 0999' },
      { ...contact, jobTitle: 'Engineer', phone: '+44 20 7946 0000' },
      { ...contact, jobTitle: 'Analyst' },
    ]);
    expect(body.data.slice(2).map((c) => c.at)).toEqual([at(5).toISOString(), at(0).toISOString()]);
    expect(body.data[3]?.fields.jobTitle?.eventTime).toBe(at(0).toISOString());
    // The person's changes are from now, after the reports.
    expect(Date.parse(body.data[1]!.at)).toBeGreaterThan(at(5).getTime());
  });

  it('pages by cursor without overlap, and refuses a cursor it did not give', async () => {
    const all = (await history(salesKey)).json<HistoryBody>().data.map((c) => c.id);
    const seen: string[] = [];
    let query = '?limit=1';
    for (let page = 0; page < 6; page++) {
      const body = (await history(a.adminKey, query)).json<HistoryBody>();
      seen.push(...body.data.map((c) => c.id));
      if (body.nextCursor === null) break;
      query = `?limit=1&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    expect(seen).toEqual(all);
    expect(all).toHaveLength(4);

    const malformed = await history(salesKey, '?cursor=not-a-cursor');
    expect([malformed.statusCode, malformed.json().error.code]).toEqual([400, 'validation_failed']);
    // Well formed, but no change of this record.
    const foreign = Buffer.from('0'.repeat(64)).toString('base64url');
    const elsewhere = await history(salesKey, `?cursor=${foreign}`);
    expect([elsewhere.statusCode, elsewhere.json().error.code]).toEqual([400, 'validation_failed']);
    expect(elsewhere.json().error.message).toContain("not a cursor of this record's history");
    expect((await history(salesKey, '?limit=0')).statusCode).toBe(400);
  });

  it('answers the fields and provenance as they were at an earlier time', async () => {
    const first = await asOf(salesKey, at(1).toISOString());
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json<AsOfBody>()).toEqual({
      id: ada,
      type: 'person',
      at: at(1).toISOString(),
      fields: { ...contact, jobTitle: 'Analyst' },
      provenance: Object.fromEntries(
        ['email', 'firstName', 'lastName', 'jobTitle'].map((field) => [
          field,
          {
            source: { kind: 'connection', id: crmA, label: 'CRM A', actorKind: null },
            eventTime: at(0).toISOString(),
            conflicted: false,
          },
        ]),
      ),
    });

    // After CRM B's report: its phone, and the job title in conflict until a person decided.
    const both = (await asOf(salesKey, at(6).toISOString())).json<AsOfBody>();
    expect(both.fields.phone).toBe('+44 20 7946 0000');
    expect(both.provenance.phone?.source).toEqual({
      kind: 'connection',
      id: crmB,
      label: 'CRM B',
      actorKind: null,
    });
    expect(both.provenance.jobTitle?.conflicted).toBe(true);

    // An offset is a time like any other.
    const offset = (await asOf(salesKey, '2099-01-01T02:00:00+02:00')).json<AsOfBody>();
    expect(offset.at).toBe('2099-01-01T00:00:00.000Z');
    expect(offset.fields).toMatchObject({ phone: '+44 20 7946 0999', jobTitle: 'Engineer' });
    expect(offset.provenance.jobTitle).toMatchObject({
      source: { kind: 'user', id: salesKeyId, label: 'Dana', actorKind: 'apiKey' },
      conflicted: false,
    });
  });

  it('404 not_yet_existing before the record existed; 400 for a malformed or missing time', async () => {
    const before = await asOf(salesKey, at(-1).toISOString());
    expect([before.statusCode, before.json().error.code]).toEqual([404, 'not_yet_existing']);
    const noDocument = await call(
      salesKey,
      'GET',
      `/api/v1/people/${undocumented}/as-of?at=${at(1).toISOString()}`,
    );
    expect([noDocument.statusCode, noDocument.json().error.code]).toEqual([404, 'not_yet_existing']);
    for (const time of ['yesterday', '2026-13-01T00:00:00Z', '2026-11-20', '']) {
      const res = await asOf(salesKey, time);
      expect([time, res.statusCode, res.json().error.code]).toEqual([time, 400, 'validation_failed']);
    }
    const missing = await call(salesKey, 'GET', `/api/v1/people/${ada}/as-of`);
    expect([missing.statusCode, missing.json().error.code]).toEqual([400, 'validation_failed']);
  });

  it('a record without a document yet has an empty history', async () => {
    const res = await call(salesKey, 'GET', `/api/v1/people/${undocumented}/history`);
    expect(res.json()).toEqual({ recordId: undocumented, identity: [], data: [], nextCursor: null });
  });

  it("another workspace's key, another collection or no record at all: 404 not_found", async () => {
    for (const url of [
      `/api/v1/people/${ada}/history`,
      `/api/v1/people/${ada}/as-of?at=${at(1).toISOString()}`,
    ]) {
      const res = await call(b.adminKey, 'GET', url);
      expect([url, res.statusCode, res.json()]).toEqual([
        url,
        404,
        { error: { code: 'not_found', message: expect.any(String) } },
      ]);
      expect(res.body).not.toContain('Ada');
    }
    expect((await call(salesKey, 'GET', `/api/v1/companies/${ada}/history`)).statusCode).toBe(404);
    expect((await call(salesKey, 'GET', `/api/v1/people/${randomUUID()}/history`)).statusCode).toBe(404);
    expect((await call(salesKey, 'GET', '/api/v1/people/not-a-uuid/history')).statusCode).toBe(400);
  });
  it("a member's edit with the session shows as that member: provenance, history and audit log", async () => {
    const mia = await signInAs(t.app, {
      workspaceId: a.workspaceId,
      email: 'mia@acme.test',
      role: 'admin',
      name: 'Mia',
    });
    const edit = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/people/${ada}`,
      headers: mia.writeHeaders,
      payload: { fields: { phone: '+44 20 7946 0111' } },
    });
    expect(edit.statusCode, edit.body).toBe(200);
    const asMember = { kind: 'user', id: `member:${mia.memberId}`, label: 'Mia', actorKind: 'member' };
    expect(edit.json<{ provenance: AsOfBody['provenance'] }>().provenance.phone?.source).toEqual(asMember);
    const record = await call(salesKey, 'GET', `/api/v1/people/${ada}`);
    const provenance = record.json<{ provenance: AsOfBody['provenance'] }>().provenance;
    expect(provenance.phone?.source).toEqual(asMember);
    expect(provenance.jobTitle?.source).toEqual({
      kind: 'user',
      id: salesKeyId,
      label: 'Dana',
      actorKind: 'apiKey',
    });
    expect(provenance.email?.source).toMatchObject({
      kind: 'connection',
      label: 'CRM B',
      actorKind: null,
    });

    const [latest] = (await history(salesKey)).json<HistoryBody>().data;
    expect(latest?.source).toEqual({ ...asMember, provider: null, name: null });
    expect(latest?.fields.phone?.value).toBe('+44 20 7946 0111');

    // An audited action of the member, and the log filtered by that member.
    const replay = await t.app.inject({
      method: 'POST',
      url: '/api/v1/replays',
      headers: mia.writeHeaders,
      payload: { mode: 'preview', from: 'beginning' },
    });
    expect(replay.statusCode, replay.body).toBe(202);
    expect(replay.json<{ createdBy: unknown }>().createdBy).toEqual({
      kind: 'member',
      id: mia.memberId,
      keyId: null,
      label: 'Mia',
    });
    const audit = await call(a.adminKey, 'GET', `/api/v1/audit-log?actorKind=member&actorId=${mia.memberId}`);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json<{ data: { action: string; actor: unknown }[] }>().data).toEqual([
      expect.objectContaining({
        action: 'replay.requested',
        actor: { kind: 'member', id: mia.memberId, label: 'Mia', keyId: null, userId: mia.memberId },
      }),
    ]);
    const byKey = await call(a.adminKey, 'GET', `/api/v1/audit-log?actorId=${salesKeyId}`);
    expect(byKey.json<{ data: unknown[] }>().data).toEqual([]);
  });
});
