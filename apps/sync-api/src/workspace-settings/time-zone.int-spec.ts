import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { IdentityService } from '@syncline/identity';
import { LOG_EVENT_COLUMNS, type LogEventRow, partitionFor, toLogEvent } from '@syncline/log';
import { SyncStage } from '@syncline/sync-stage';
import type { LightMyRequestResponse } from 'fastify';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SignedIn, signInAs } from '../testing/sign-in';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface TimeZoneBody {
  timeZone: string;
  version: number;
  inForce: string;
}
interface ErrorBody {
  error: { code: string; message: string };
}
interface AuditEntry {
  action: string;
  targetType: string;
  targetId: string;
  actor: { keyId: string | null };
  details: Record<string, unknown>;
}

const URL = '/api/v1/workspace/time-zone';

describe('the workspace time zone', () => {
  let t: TestApp;
  let pg: Client;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let adminKeyId: string;
  let salesMember: SignedIn;

  const call = (
    key: string,
    method: 'GET' | 'PUT',
    options: { payload?: object; ifMatch?: string } = {},
  ): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method,
      url: URL,
      headers: { ...bearer(key), ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }) },
      ...(options.payload ? { payload: options.payload } : {}),
    });
  const read = async (key: string): Promise<TimeZoneBody> => {
    const res = await call(key, 'GET');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(`"${res.json<TimeZoneBody>().version}"`);
    return res.json<TimeZoneBody>();
  };
  const put = (key: string, timeZone: unknown, ifMatch?: string) =>
    call(key, 'PUT', { payload: { timeZone }, ...(ifMatch === undefined ? {} : { ifMatch }) });
  const stored = (workspaceId: string) =>
    t.prisma.workspace.findUniqueOrThrow({
      where: { id: workspaceId },
      select: { timeZone: true, timeZoneVersion: true },
    });
  const zoneEvents = async (workspaceId: string) =>
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
          WHERE workspace_id = $1 AND op = 'time_zone' ORDER BY partition, "offset"`,
        [workspaceId],
      )
    ).rows;
  const audited = async (key: string): Promise<AuditEntry[]> => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/audit-log?limit=200&action=workspace.time_zone_changed',
      headers: bearer(key),
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: AuditEntry[] }>().data;
  };
  /** What the sync stage does with the workspace's `time_zone` events: its own code folds them. */
  const fold = async (workspaceId: string): Promise<void> => {
    const { rows: logged } = await pg.query<LogEventRow>(
      `SELECT ${LOG_EVENT_COLUMNS} FROM change_event WHERE workspace_id = $1 AND op = 'time_zone'
        ORDER BY partition, "offset"`,
      [workspaceId],
    );
    const stage = new SyncStage({
      identity: new IdentityService(),
      engine: new MergeEngine(new PgMergeStore(pg)),
    });
    await pg.query('BEGIN');
    await stage.handle(pg, logged.map(toLogEvent));
    await pg.query('COMMIT');
  };
  const healthZone = async (key: string): Promise<unknown> => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/health/sync', headers: bearer(key) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ insights: { timeZone: string } }>().insights.timeZone;
  };

  beforeAll(async () => {
    t = await startTestApp('time_zone');
    pg = new Client({ connectionString: t.db.url });
    await pg.connect();
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    adminKeyId = (await t.prisma.apiKey.findFirstOrThrow({ where: { workspaceId: a.workspaceId } })).id;
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    salesMember = await signInAs(t.app, {
      workspaceId: a.workspaceId,
      email: 'rep@acme.test',
      role: 'sales',
    });
  });
  afterAll(async () => {
    await pg?.end();
    await t?.close();
  });

  it('reads UTC at version 0 before any change, for every member and key of the workspace', async () => {
    const initial = { timeZone: 'UTC', version: 0, inForce: 'UTC' };
    expect(await read(a.adminKey)).toEqual(initial);
    expect(await read(salesKey)).toEqual(initial);
    const session = await t.app.inject({ method: 'GET', url: URL, headers: { cookie: salesMember.cookie } });
    expect(session.statusCode).toBe(200);
    expect(session.json()).toEqual(initial);
    expect(await healthZone(a.adminKey)).toBe('UTC');
    expect((await t.app.inject({ method: 'GET', url: URL })).statusCode).toBe(401);
  });

  it("lets an admin change it: the next version, one time_zone event on the workspace's partition under its own connection, an audit entry", async () => {
    const res = await put(a.adminKey, 'Europe/Paris', '"0"');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    // Saved, not yet in force: the sync stage has not read the event.
    expect(res.json()).toEqual({ timeZone: 'Europe/Paris', version: 1, inForce: 'UTC' });
    expect(await read(salesKey)).toEqual({ timeZone: 'Europe/Paris', version: 1, inForce: 'UTC' });
    expect(await stored(a.workspaceId)).toEqual({ timeZone: 'Europe/Paris', timeZoneVersion: 1 });

    const { rows: own } = await pg.query<{ id: string }>(
      `SELECT id FROM connection WHERE workspace_id = $1 AND provider = 'syncline'`,
      [a.workspaceId],
    );
    expect(own).toHaveLength(1);
    const { rows: heads } = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM log_partition');
    expect(await zoneEvents(a.workspaceId)).toEqual([
      {
        partition: partitionFor(a.workspaceId, heads[0]!.n),
        connection_id: own[0]!.id,
        entity_type: 'person',
        external_id: 'time-zone',
        event_key: 'time_zone:1',
        fields: { timeZone: 'Europe/Paris', version: 1 },
      },
    ]);

    const entries = await audited(a.adminKey);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'workspace.time_zone_changed',
      targetType: 'workspace',
      targetId: a.workspaceId,
      actor: { keyId: adminKeyId },
      details: { from: 'UTC', to: 'Europe/Paris', version: 1 },
    });
  });

  it('is in force once the sync stage has folded the event: inForce, sync health', async () => {
    await fold(a.workspaceId);
    expect(await read(a.adminKey)).toEqual({ timeZone: 'Europe/Paris', version: 1, inForce: 'Europe/Paris' });
    expect(await healthZone(a.adminKey)).toBe('Europe/Paris');
  });

  it('answers the same zone again with the current view, appending and auditing nothing', async () => {
    for (const [zone, ifMatch] of [
      ['Europe/Paris', undefined],
      ['Europe/Paris', '"1"'],
      // The runtime's spelling: the same zone.
      ['europe/PARIS', undefined],
    ] as const) {
      const res = await put(a.adminKey, zone, ifMatch);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers.etag).toBe('"1"');
      expect(res.json()).toEqual({ timeZone: 'Europe/Paris', version: 1, inForce: 'Europe/Paris' });
    }
    expect(await zoneEvents(a.workspaceId)).toHaveLength(1);
    expect(await audited(a.adminKey)).toHaveLength(1);
    expect(await stored(a.workspaceId)).toEqual({ timeZone: 'Europe/Paris', timeZoneVersion: 1 });
  });

  it.each([
    ['an unknown zone', 'Mars/Olympus_Mons'],
    ['an offset', '+01:00'],
    ['an empty name', ''],
    ['a name with spaces', 'Europe/Paris '],
    ['a number', 1],
  ])('refuses %s with 400 validation_failed and appends nothing', async (_case, zone) => {
    const res = await put(a.adminKey, zone, '"1"');
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.code).toBe('validation_failed');
    expect(res.json<ErrorBody>().error.message).toContain('timeZone:');
    if (typeof zone === 'string')
      expect(res.json<ErrorBody>().error.message).toContain('timeZone: not an IANA time zone');
    expect(await zoneEvents(a.workspaceId)).toHaveLength(1);
    expect(await stored(a.workspaceId)).toEqual({ timeZone: 'Europe/Paris', timeZoneVersion: 1 });
  });

  it('refuses a body without a zone, or with more than one', async () => {
    for (const payload of [{}, { timeZone: 'Asia/Tokyo', version: 2 }]) {
      const res = await call(a.adminKey, 'PUT', { payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json<ErrorBody>().error.code).toBe('validation_failed');
    }
    expect(await zoneEvents(a.workspaceId)).toHaveLength(1);
  });

  it('refuses a salesperson with 403, by key and by session, changing nothing', async () => {
    const byKey = await put(salesKey, 'Asia/Tokyo', '"1"');
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json<ErrorBody>().error.code).toBe('forbidden');
    const bySession = await t.app.inject({
      method: 'PUT',
      url: URL,
      headers: salesMember.writeHeaders,
      payload: { timeZone: 'Asia/Tokyo' },
    });
    expect(bySession.statusCode).toBe(403);
    expect(await stored(a.workspaceId)).toEqual({ timeZone: 'Europe/Paris', timeZoneVersion: 1 });
    expect(await zoneEvents(a.workspaceId)).toHaveLength(1);
    expect(await audited(a.adminKey)).toHaveLength(1);
  });

  it('refuses a stale If-Match with 412 and a malformed one with 400, changing nothing', async () => {
    const stale = await put(a.adminKey, 'Asia/Tokyo', '"0"');
    expect(stale.statusCode).toBe(412);
    expect(stale.json<ErrorBody>().error).toEqual({
      code: 'precondition_failed',
      message: 'the time zone is at version 1, not 0',
    });
    expect((await put(a.adminKey, 'Asia/Tokyo', '"5"')).statusCode).toBe(412);
    const malformed = await put(a.adminKey, 'Asia/Tokyo', 'one');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<ErrorBody>().error.message).toContain('If-Match');
    expect(await stored(a.workspaceId)).toEqual({ timeZone: 'Europe/Paris', timeZoneVersion: 1 });
    expect(await zoneEvents(a.workspaceId)).toHaveLength(1);
  });

  it('lets one of two changes from the same version through', async () => {
    const [first, second] = await Promise.all([
      put(a.adminKey, 'Asia/Tokyo', '"1"'),
      put(a.adminKey, 'America/Sao_Paulo', '"1"'),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 412]);
    const winner = (first.statusCode === 200 ? first : second).json<TimeZoneBody>();
    expect(winner.version).toBe(2);
    expect(await read(a.adminKey)).toEqual({ ...winner, inForce: 'Europe/Paris' });
    expect((await zoneEvents(a.workspaceId)).map((e) => [e.event_key, e.fields])).toEqual([
      ['time_zone:1', { timeZone: 'Europe/Paris', version: 1 }],
      ['time_zone:2', { timeZone: winner.timeZone, version: 2 }],
    ]);
    const entries = await audited(a.adminKey);
    expect(entries.map((e) => e.details)).toEqual([
      { from: 'Europe/Paris', to: winner.timeZone, version: 2 },
      { from: 'UTC', to: 'Europe/Paris', version: 1 },
    ]);
    await fold(a.workspaceId);
    expect((await read(a.adminKey)).inForce).toBe(winner.timeZone);
  });

  it("keeps each workspace's zone to itself", async () => {
    const aBefore = await read(a.adminKey);
    const aEvents = await zoneEvents(a.workspaceId);
    // B starts from the defaults: none of A's zone or version.
    expect(await read(b.adminKey)).toEqual({ timeZone: 'UTC', version: 0, inForce: 'UTC' });
    expect(await healthZone(b.adminKey)).toBe('UTC');
    // A's version means nothing to B's setting.
    expect((await put(b.adminKey, 'America/New_York', `"${aBefore.version}"`)).statusCode).toBe(412);
    const own = await put(b.adminKey, 'America/New_York', '"0"');
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json()).toEqual({ timeZone: 'America/New_York', version: 1, inForce: 'UTC' });

    const { rows: bOwn } = await pg.query<{ id: string }>(
      `SELECT id FROM connection WHERE workspace_id = $1 AND provider = 'syncline'`,
      [b.workspaceId],
    );
    expect((await zoneEvents(b.workspaceId)).map((e) => [e.connection_id, e.event_key])).toEqual([
      [bOwn[0]!.id, 'time_zone:1'],
    ]);
    await fold(b.workspaceId);
    expect(await read(b.adminKey)).toEqual({
      timeZone: 'America/New_York',
      version: 1,
      inForce: 'America/New_York',
    });
    expect(await healthZone(b.adminKey)).toBe('America/New_York');

    // A's setting, log and audit trail are as they were; B's audit trail has B's change alone.
    expect(await read(a.adminKey)).toEqual(aBefore);
    expect(await healthZone(a.adminKey)).toBe(aBefore.inForce);
    expect(await zoneEvents(a.workspaceId)).toEqual(aEvents);
    expect((await audited(a.adminKey)).map((e) => e.targetId)).toEqual([a.workspaceId, a.workspaceId]);
    expect((await audited(b.adminKey)).map((e) => [e.targetId, e.details])).toEqual([
      [b.workspaceId, { from: 'UTC', to: 'America/New_York', version: 1 }],
    ]);
  });

  it('documents the routes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    }>();
    const route = doc.paths[URL];
    expect(Object.keys(route?.get?.responses ?? {}).sort()).toEqual(['200', '401']);
    expect(Object.keys(route?.put?.responses ?? {}).sort()).toEqual(['200', '400', '401', '403', '412']);
    expect(route?.put?.responses['200']?.description).toContain('recomputes');
  });
});
