import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore, type PolicyMap } from '@syncline/conflicts';
import { UNIFIED_FIELDS } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import { LOG_EVENT_COLUMNS, type LogEventRow, partitionFor, toLogEvent } from '@syncline/log';
import { SyncStage } from '@syncline/sync-stage';
import type { LightMyRequestResponse } from 'fastify';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

type Policy = { kind: 'lww' | 'manual' | 'union' } | { kind: 'priority'; order: string[] };
interface PolicySetBody {
  entityType: string;
  version: number;
  fields: Record<string, Policy>;
  strategies: Record<string, string[]>;
  updatedAt: string | null;
}
interface RevisionBody {
  version: number;
  fields: Record<string, Policy>;
  changedBy: { kind: string; id: string; keyId: string | null; label: string | null };
  createdAt: string;
}
interface ErrorBody {
  error: { code: string; message: string };
}

const allLww = (fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, { kind: 'lww' }]));
/** No person field holds a list: none may take `union`. */
const notUnion = (fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, ['lww', 'priority', 'manual']]));
const PERSON_FIELDS = Object.keys(UNIFIED_FIELDS.person);

describe('field policies', () => {
  let t: TestApp;
  let pg: Client;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let adminKeyId: string;
  let adminKeyName: string;
  let hubspot: string;
  let calendar: string;
  let internal: string;
  let globex: string;

  const call = (
    key: string,
    method: 'GET' | 'PUT',
    url: string,
    options: { payload?: object; ifMatch?: string } = {},
  ): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method,
      url,
      headers: { ...bearer(key), ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }) },
      ...(options.payload ? { payload: options.payload } : {}),
    });
  const read = async (key: string, entityType: string): Promise<PolicySetBody> => {
    const res = await call(key, 'GET', `/api/v1/policies/${entityType}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(`"${res.json<PolicySetBody>().version}"`);
    return res.json<PolicySetBody>();
  };
  const replace = (key: string, entityType: string, fields: object, ifMatch?: string) =>
    call(key, 'PUT', `/api/v1/policies/${entityType}`, {
      payload: { fields },
      ...(ifMatch === undefined ? {} : { ifMatch }),
    });
  /**
   * What the merge itself reads once the sync stage has folded the workspace's log: the
   * `policy` events a replacement appended, folded by the stage's own code (again: the last
   * one folded is in force, so folding them twice changes nothing).
   */
  const mergeSees = async (workspaceId: string, entityType: string): Promise<PolicyMap> => {
    const { rows: logged } = await pg.query<LogEventRow>(
      `SELECT ${LOG_EVENT_COLUMNS} FROM change_event WHERE workspace_id = $1 AND op = 'policy'
        ORDER BY partition, "offset"`,
      [workspaceId],
    );
    const engine = new MergeEngine(new PgMergeStore(pg));
    const stage = new SyncStage({ identity: new IdentityService(), engine });
    await pg.query('BEGIN');
    await stage.handle(pg, logged.map(toLogEvent));
    await pg.query('COMMIT');
    return new PgMergeStore(pg).policies(workspaceId, entityType);
  };
  const policyEvents = async (workspaceId: string) =>
    (
      await pg.query<{
        partition: number;
        connection_id: string;
        entity_type: string;
        external_id: string;
        event_key: string;
        fields: unknown;
      }>(
        `SELECT partition, connection_id, entity_type, external_id, event_key, fields FROM change_event
          WHERE workspace_id = $1 AND op = 'policy' ORDER BY partition, "offset"`,
        [workspaceId],
      )
    ).rows;
  const rows = (workspaceId: string) =>
    t.prisma.fieldPolicy.findMany({
      where: { workspaceId },
      orderBy: [{ entityType: 'asc' }, { field: 'asc' }],
      select: { entityType: true, field: true, policy: true, priority: true, version: true },
    });
  const connection = async (workspaceId: string, provider: 'hubspot' | 'google_calendar' | 'syncline') =>
    (
      await t.prisma.connection.create({
        data: {
          workspaceId,
          provider,
          externalAccountId: `${provider}-${randomUUID()}`,
          ...(provider === 'hubspot' ? { fieldMappings: { 'person.leadScore': 'lead_score' } } : {}),
        },
      })
    ).id;

  beforeAll(async () => {
    t = await startTestApp('policies');
    pg = new Client({ connectionString: t.db.url });
    await pg.connect();
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    const adminKeyRow = await t.prisma.apiKey.findFirstOrThrow({ where: { workspaceId: a.workspaceId } });
    adminKeyId = adminKeyRow.id;
    adminKeyName = adminKeyRow.name;
    hubspot = await connection(a.workspaceId, 'hubspot');
    calendar = await connection(a.workspaceId, 'google_calendar');
    internal = await connection(a.workspaceId, 'syncline');
    globex = await connection(b.workspaceId, 'hubspot');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
  });
  afterAll(async () => {
    await pg?.end();
    await t?.close();
  });

  it('reads every field as lww before any policy is set, custom fields included', async () => {
    expect(await read(a.adminKey, 'person')).toEqual({
      entityType: 'person',
      version: 0,
      fields: allLww([...PERSON_FIELDS, 'leadScore']),
      strategies: notUnion([...PERSON_FIELDS, 'leadScore']),
      updatedAt: null,
    });
    // The mapping is a person's: a deal has only its unified fields.
    expect((await read(a.adminKey, 'deal')).fields).toEqual(allLww(Object.keys(UNIFIED_FIELDS.deal)));
    expect(await mergeSees(a.workspaceId, 'person')).toEqual({});
  });

  it('replaces the set and reads it back, as the merge reads it', async () => {
    const res = await replace(
      a.adminKey,
      'person',
      {
        jobTitle: { kind: 'manual' },
        lifecycleStage: { kind: 'priority', order: [hubspot, 'user'] },
        leadScore: { kind: 'priority', order: ['user', calendar.toUpperCase(), hubspot] },
        email: { kind: 'lww' },
      },
      '"0"',
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    const expected = {
      jobTitle: { kind: 'manual' },
      lifecycleStage: { kind: 'priority', order: [hubspot, 'user'] },
      leadScore: { kind: 'priority', order: ['user', calendar, hubspot] },
    };
    const body = res.json<PolicySetBody>();
    expect(body).toEqual({
      entityType: 'person',
      version: 1,
      fields: { ...allLww([...PERSON_FIELDS, 'leadScore']), ...expected },
      strategies: notUnion([...PERSON_FIELDS, 'leadScore']),
      updatedAt: expect.any(String),
    });
    expect(await read(salesKey, 'person')).toEqual(body);

    // lww is the default: it is not stored. Each row carries the set's version.
    expect(await rows(a.workspaceId)).toEqual([
      { entityType: 'person', field: 'jobTitle', policy: 'manual', priority: [], version: 1 },
      {
        entityType: 'person',
        field: 'leadScore',
        policy: 'priority',
        priority: expected.leadScore.order,
        version: 1,
      },
      {
        entityType: 'person',
        field: 'lifecycleStage',
        policy: 'priority',
        priority: expected.lifecycleStage.order,
        version: 1,
      },
    ]);
    expect(await mergeSees(a.workspaceId, 'person')).toEqual(expected);
    expect(await mergeSees(a.workspaceId, 'deal')).toEqual({});
  });

  it('drops the fields a replacement leaves out, and takes union on list-valued fields', async () => {
    const person = await replace(
      a.adminKey,
      'person',
      { jobTitle: { kind: 'priority', order: [calendar] } },
      'W/"1"',
    );
    expect(person.statusCode).toBe(200);
    expect(person.json<PolicySetBody>().version).toBe(2);
    expect(await mergeSees(a.workspaceId, 'person')).toEqual({
      jobTitle: { kind: 'priority', order: [calendar] },
    });

    // Without If-Match the set is replaced whatever its version; each type has its own.
    const meeting = await replace(a.adminKey, 'meeting', {
      attendees: { kind: 'union' },
      title: { kind: 'manual' },
    });
    expect(meeting.statusCode).toBe(200);
    expect(meeting.json<PolicySetBody>().version).toBe(1);
    const email = await replace(a.adminKey, 'email_activity', {
      to: { kind: 'union' },
      labelIds: { kind: 'union' },
    });
    expect(email.statusCode).toBe(200);
    // What the page offers per field: union where the field holds a list.
    const { strategies } = await read(a.adminKey, 'meeting');
    expect(strategies.attendees).toEqual(['lww', 'priority', 'manual', 'union']);
    expect(strategies.title).toEqual(['lww', 'priority', 'manual']);
    expect(await mergeSees(a.workspaceId, 'meeting')).toEqual({
      attendees: { kind: 'union' },
      title: { kind: 'manual' },
    });
    expect(await mergeSees(a.workspaceId, 'email_activity')).toEqual({
      to: { kind: 'union' },
      labelIds: { kind: 'union' },
    });
    expect((await rows(a.workspaceId)).map((r) => [r.entityType, r.field, r.version])).toEqual([
      ['email_activity', 'labelIds', 1],
      ['email_activity', 'to', 1],
      ['meeting', 'attendees', 1],
      ['meeting', 'title', 1],
      ['person', 'jobTitle', 2],
    ]);
  });

  it('refuses a stale If-Match with 412 and changes nothing', async () => {
    const before = await rows(a.workspaceId);
    const stale = await replace(a.adminKey, 'person', { jobTitle: { kind: 'manual' } }, '"1"');
    expect(stale.statusCode).toBe(412);
    expect(stale.json<ErrorBody>().error).toEqual({
      code: 'precondition_failed',
      message: 'the person policies are at version 2, not 1',
    });
    const ahead = await replace(a.adminKey, 'person', { jobTitle: { kind: 'manual' } }, '"7"');
    expect(ahead.statusCode).toBe(412);
    const malformed = await replace(a.adminKey, 'person', { jobTitle: { kind: 'manual' } }, 'two');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<ErrorBody>().error.message).toContain('If-Match');
    expect(await rows(a.workspaceId)).toEqual(before);
    expect((await read(a.adminKey, 'person')).version).toBe(2);
  });

  it('lets one of two replacements from the same version through', async () => {
    const [first, second] = await Promise.all([
      replace(a.adminKey, 'deal', { stage: { kind: 'manual' } }, '"0"'),
      replace(a.adminKey, 'deal', { stage: { kind: 'priority', order: [hubspot] } }, '"0"'),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 412]);
    const winner = first.statusCode === 200 ? first : second;
    expect((await read(a.adminKey, 'deal')).fields.stage).toEqual(winner.json<PolicySetBody>().fields.stage);
    expect(
      await t.prisma.fieldPolicyRevision.count({ where: { workspaceId: a.workspaceId, entityType: 'deal' } }),
    ).toBe(1);
    // The refused one put nothing on the log either.
    expect((await policyEvents(a.workspaceId)).filter((e) => e.entity_type === 'deal')).toHaveLength(1);
  });

  it("puts each saved set on the change log, on the workspace's partition under its own connection; a refused one puts nothing there", async () => {
    const c = await seedWorkspace(t.prisma, 'Initech');
    const before = await policyEvents(c.workspaceId);
    const saved = await replace(c.adminKey, 'company', { name: { kind: 'manual' } });
    expect(saved.statusCode).toBe(200);
    const { version } = saved.json<PolicySetBody>();
    expect(
      (await replace(c.adminKey, 'company', { name: { kind: 'lww' } }, `"${version - 1}"`)).statusCode,
    ).toBe(412);
    expect((await replace(c.adminKey, 'company', { nope: { kind: 'manual' } })).statusCode).toBe(400);
    const { rows: own } = await pg.query<{ id: string }>(
      `SELECT id FROM connection WHERE workspace_id = $1 AND provider = 'syncline'`,
      [c.workspaceId],
    );
    const { rows: heads } = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM log_partition');
    expect((await policyEvents(c.workspaceId)).slice(before.length)).toEqual([
      {
        partition: partitionFor(c.workspaceId, heads[0]!.n),
        connection_id: own[0]!.id,
        entity_type: 'company',
        external_id: 'policies',
        event_key: `policy:company:${version}`,
        fields: { version, policies: { name: { kind: 'manual' } } },
      },
    ]);
    // Folded, it is the set the merge settles company names by; the other workspace's is untouched.
    expect(await mergeSees(c.workspaceId, 'company')).toEqual({ name: { kind: 'manual' } });
    expect(await mergeSees(a.workspaceId, 'company')).toEqual({});
  });

  it.each([
    ['an unknown kind', { jobTitle: { kind: 'newest' } }, 'fields.jobTitle.kind'],
    ['an unknown field', { emails: { kind: 'union' } }, 'fields.emails: not a field of a person'],
    ['a field of another type', { stage: { kind: 'manual' } }, 'fields.stage: not a field of a person'],
    [
      'union on a field that holds no list',
      { email: { kind: 'union' } },
      'fields.email.kind: union merges lists',
    ],
    ['an empty order', { jobTitle: { kind: 'priority', order: [] } }, 'fields.jobTitle.order'],
    [
      'a source twice',
      { jobTitle: { kind: 'priority', order: ['user', 'user'] } },
      'fields.jobTitle.order.1: listed twice',
    ],
    [
      'a source that is no id',
      { jobTitle: { kind: 'priority', order: ['hubspot'] } },
      'fields.jobTitle.order.0',
    ],
    ['an order on another kind', { jobTitle: { kind: 'manual', order: ['user'] } }, 'fields.jobTitle'],
  ])('refuses %s with 400, naming the field', async (_case, fields, named) => {
    const res = await replace(a.adminKey, 'person', fields);
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.code).toBe('validation_failed');
    expect(res.json<ErrorBody>().error.message).toContain(named);
  });

  it("refuses a priority order naming another workspace's connection, an unknown one or the internal one", async () => {
    const before = await rows(a.workspaceId);
    const res = await replace(a.adminKey, 'person', {
      jobTitle: { kind: 'priority', order: [hubspot, globex, randomUUID(), 'user'] },
      lastName: { kind: 'priority', order: [internal] },
    });
    expect(res.statusCode).toBe(400);
    const { message } = res.json<ErrorBody>().error;
    expect(message).toContain('fields.jobTitle.order.1: not a connection of this workspace');
    expect(message).toContain('fields.jobTitle.order.2: not a connection of this workspace');
    expect(message).toContain('fields.lastName.order.0: not a connection of this workspace');
    // The workspace's own provider connection and `user` pass.
    expect(message).not.toContain('fields.jobTitle.order.0');
    expect(message).not.toContain('fields.jobTitle.order.3');
    expect(message).not.toContain(globex.slice(0, 8));
    expect(await rows(a.workspaceId)).toEqual(before);
  });

  it('refuses an unknown entity type', async () => {
    for (const url of ['/api/v1/policies/people', '/api/v1/policies/contact/revisions']) {
      const res = await call(a.adminKey, 'GET', url);
      expect(res.statusCode).toBe(400);
      expect(res.json<ErrorBody>().error.message).toContain('entityType');
    }
    expect((await replace(a.adminKey, 'email-activities', {})).statusCode).toBe(400);
  });

  it('lets a sales key read policies and revisions, not replace them', async () => {
    const before = await rows(a.workspaceId);
    const put = await replace(salesKey, 'person', { jobTitle: { kind: 'manual' } }, '"2"');
    expect(put.statusCode).toBe(403);
    expect(put.json<ErrorBody>().error.code).toBe('forbidden');
    expect((await call(salesKey, 'GET', '/api/v1/policies/person')).statusCode).toBe(200);
    expect((await call(salesKey, 'GET', '/api/v1/policies/person/revisions')).statusCode).toBe(200);
    expect(await rows(a.workspaceId)).toEqual(before);
  });

  it("keeps each workspace's policies to itself", async () => {
    const aBefore = await rows(a.workspaceId);
    // B starts from the defaults: none of A's policies, versions or custom fields.
    expect(await read(b.adminKey, 'person')).toEqual({
      entityType: 'person',
      version: 0,
      fields: allLww([...PERSON_FIELDS, 'leadScore']),
      strategies: notUnion([...PERSON_FIELDS, 'leadScore']),
      updatedAt: null,
    });
    expect((await call(b.adminKey, 'GET', '/api/v1/policies/person/revisions')).json()).toEqual({
      data: [],
      nextCursor: null,
    });
    // A's version means nothing to B's set.
    expect((await replace(b.adminKey, 'person', { jobTitle: { kind: 'manual' } }, '"2"')).statusCode).toBe(
      412,
    );
    const refused = await replace(b.adminKey, 'person', { jobTitle: { kind: 'priority', order: [hubspot] } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<ErrorBody>().error.message).toContain('fields.jobTitle.order.0: not a connection');

    const own = await replace(
      b.adminKey,
      'person',
      { jobTitle: { kind: 'priority', order: [globex, 'user'] } },
      '"0"',
    );
    expect(own.statusCode).toBe(200);
    expect(own.json<PolicySetBody>().version).toBe(1);
    expect(await mergeSees(b.workspaceId, 'person')).toEqual({
      jobTitle: { kind: 'priority', order: [globex, 'user'] },
    });
    expect(await rows(a.workspaceId)).toEqual(aBefore);
    expect(await mergeSees(a.workspaceId, 'person')).toEqual({
      jobTitle: { kind: 'priority', order: [calendar] },
    });
    expect((await read(a.adminKey, 'person')).version).toBe(2);
  });

  it('lists revisions newest first, with who changed the set, page by page', async () => {
    const res = await call(a.adminKey, 'GET', '/api/v1/policies/person/revisions');
    expect(res.statusCode).toBe(200);
    const { data, nextCursor } = res.json<{ data: RevisionBody[]; nextCursor: string | null }>();
    expect(nextCursor).toBeNull();
    expect(data).toEqual([
      {
        version: 2,
        fields: { jobTitle: { kind: 'priority', order: [calendar] } },
        changedBy: { kind: 'apiKey', id: adminKeyId, keyId: adminKeyId, label: adminKeyName },
        createdAt: expect.any(String),
      },
      {
        version: 1,
        fields: {
          jobTitle: { kind: 'manual' },
          lifecycleStage: { kind: 'priority', order: [hubspot, 'user'] },
          leadScore: { kind: 'priority', order: ['user', calendar, hubspot] },
        },
        changedBy: { kind: 'apiKey', id: adminKeyId, keyId: adminKeyId, label: adminKeyName },
        createdAt: expect.any(String),
      },
    ]);
    expect(Date.parse(data[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(data[1]!.createdAt));

    const first = await call(a.adminKey, 'GET', '/api/v1/policies/person/revisions?limit=1');
    const firstPage = first.json<{ data: RevisionBody[]; nextCursor: string | null }>();
    expect(firstPage.data.map((r) => r.version)).toEqual([2]);
    expect(firstPage.nextCursor).not.toBeNull();
    const second = await call(
      a.adminKey,
      'GET',
      `/api/v1/policies/person/revisions?limit=1&cursor=${firstPage.nextCursor}`,
    );
    const secondPage = second.json<{ data: RevisionBody[]; nextCursor: string | null }>();
    expect(secondPage.data.map((r) => r.version)).toEqual([1]);
    expect(secondPage.nextCursor).toBeNull();
    expect((await call(a.adminKey, 'GET', '/api/v1/policies/person/revisions?cursor=x')).statusCode).toBe(
      400,
    );
  });

  it('audits each replacement, and nothing for a refused one', async () => {
    const res = await call(a.adminKey, 'GET', '/api/v1/audit-log?limit=200');
    expect(res.statusCode).toBe(200);
    const entries = res
      .json<{
        data: {
          action: string;
          targetType: string;
          targetId: string;
          actor: { keyId: string };
          details: object;
        }[];
      }>()
      .data.filter((e) => e.action === 'field_policy.replaced');
    // person 1 and 2, meeting 1, email_activity 1, deal 1 (the refused and stale ones left none).
    const versionOf = (e: { details: object }) => (e.details as { version: number }).version;
    expect(entries.map((e) => `${e.targetId}@${versionOf(e)}`).sort()).toEqual([
      'deal@1',
      'email_activity@1',
      'meeting@1',
      'person@1',
      'person@2',
    ]);
    expect(entries.find((e) => e.targetId === 'person' && versionOf(e) === 2)).toMatchObject({
      targetType: 'field_policy',
      actor: { keyId: adminKeyId },
      details: { entityType: 'person', version: 2, policies: `jobTitle=priority(${calendar})` },
    });
    const other = await call(b.adminKey, 'GET', '/api/v1/audit-log');
    expect(other.json<{ data: { targetId: string }[] }>().data.map((e) => e.targetId)).toEqual(['person']);
  });

  it('documents the routes, and when a new set applies', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{
      paths: Record<
        string,
        Record<string, { description?: string; responses: Record<string, { description?: string }> }>
      >;
    }>();
    const set = doc.paths['/api/v1/policies/{entityType}'];
    expect(Object.keys(set?.put?.responses ?? {}).sort()).toEqual(['200', '400', '401', '403', '412']);
    expect(Object.keys(set?.get?.responses ?? {}).sort()).toEqual(['200', '400', '401']);
    expect(set?.put?.responses['200']?.description).toContain(
      'every change after it on the log is merged under it',
    );
    expect(JSON.stringify(set?.put)).toContain('email_activity');
    expect(doc.paths['/api/v1/policies/{entityType}/revisions']?.get).toBeDefined();
  });
});
