import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts } from '../testing/provider-accounts';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import {
  DISCONNECTED_ERASED_REASON,
  DISCONNECTED_KEPT_REASON,
  PAUSED_REASON,
  RESYNC_REASON,
} from './connection-lifecycle';
import type { ConnectionView } from './connections.schemas';

const PUBLIC_BASE_URL = 'https://sync.example.test';
const HUBSPOT_SECRET = `hs-${randomBytes(8).toString('hex')}`;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type ErrorBody = { error: { code: string; message: string } };
/** Offsets of the change events the tests insert by hand (partition 0). */
let nextOffset = 1;

describe('connection lifecycle: pause, resume, resync, disconnect', () => {
  let t: TestApp;
  let accounts: ProviderAccounts;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  const bodies: string[] = [];
  // Every token handed to the API (none may come back); a connection's account is proven by its token.
  const tokens: string[] = [];
  const portalOf = new Map<string, number>();
  /** A new private app token of the portal: the emulator's, so the API can prove whose it is. */
  const tokenOf = async (portalId?: number) => {
    const portal = await accounts.hubspot(portalId);
    tokens.push(portal.privateAppToken);
    return portal;
  };

  const call = async (key: string, method: Method, url: string, payload?: object) => {
    const res: LightMyRequestResponse = await t.app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload ? { payload } : {}),
    });
    bodies.push(res.body);
    return res;
  };
  const act = (key: string, id: string, action: 'pause' | 'resume' | 'resync') =>
    call(key, 'POST', `/api/v1/connections/${id}/${action}`);
  const connect = async (portalId?: number): Promise<string> => {
    const portal = await tokenOf(portalId);
    const res = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: portal.externalAccountId,
      credentials: { privateAppToken: portal.privateAppToken },
    });
    expect(res.statusCode).toBe(201);
    const { id } = res.json<{ id: string }>();
    portalOf.set(id, portal.portalId);
    return id;
  };
  const row = (id: string) => t.prisma.connection.findUniqueOrThrow({ where: { id } });
  const setRow = (id: string, data: Parameters<TestApp['prisma']['connection']['update']>[0]['data']) =>
    t.prisma.connection.update({ where: { id }, data });
  const audits = (id: string) =>
    t.prisma.auditLog.findMany({
      where: { targetId: id, action: { not: 'connection.created' } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  const pullJob = async (id: string) => (await t.pullQueue.getJob(`pull.${id}`))?.data;
  const errorOf = (res: LightMyRequestResponse) => [res.statusCode, res.json<ErrorBody>().error.code];

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('connection_lifecycle', {
      ...accounts.env,
      PUBLIC_BASE_URL,
      HUBSPOT_CLIENT_SECRET: HUBSPOT_SECRET,
      HUBSPOT_APP_ID: '999',
    });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  describe('pause', () => {
    it('pauses a live connection with its reason and keeps its cursor; pausing again changes nothing', async () => {
      const id = await connect();
      const cursors = { live: { phase: 'pull', since: 1_700_000_000_000 }, other: { keep: true } };
      await setRow(id, { status: 'live', cursors });
      await t.pullQueue.obliterate({ force: true });

      const res = await act(a.adminKey, id, 'pause');
      expect(res.statusCode).toBe(200);
      const body = res.json<ConnectionView>();
      expect(body).toMatchObject({
        id,
        status: 'paused',
        statusReason: PAUSED_REASON,
        hasCredentials: true,
        state: { status: 'paused', reason: PAUSED_REASON },
      });
      // The same shape as GET /{id}.
      expect((await call(a.adminKey, 'GET', `/api/v1/connections/${id}`)).json()).toEqual(body);
      expect((await row(id)).cursors).toEqual(cursors);
      expect(await pullJob(id)).toBeUndefined();
      const [entry, ...more] = await audits(id);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({
        workspaceId: a.workspaceId,
        action: 'connection.paused',
        targetType: 'connection',
        details: { previousStatus: 'live', status: 'paused' },
      });
      expect(entry?.actorKeyId).not.toBeNull();

      const again = await act(a.adminKey, id, 'pause');
      expect(again.statusCode).toBe(200);
      expect(again.json<ConnectionView>()).toMatchObject({ status: 'paused', statusReason: PAUSED_REASON });
      expect(await audits(id)).toHaveLength(1);
      expect((await row(id)).updatedAt).toEqual(new Date(body.updatedAt));
    });
  });

  describe('resume', () => {
    it('brings a paused or errored connection back where its cursors say, and queues a pull', async () => {
      const id = await connect();
      const cases: [string, object, string][] = [
        ['paused', { live: { phase: 'pull' } }, 'live'],
        ['paused', { backfill: { after: '200' } }, 'backfilling'],
        ['paused', {}, 'pending'],
        ['error', { live: { phase: 'pull' } }, 'live'],
      ];
      for (const [from, cursors, expected] of cases) {
        await setRow(id, { status: from as 'paused' | 'error', statusReason: 'why', cursors });
        await t.pullQueue.obliterate({ force: true });
        const before = (await audits(id)).length;
        const res = await act(a.adminKey, id, 'resume');
        expect(res.statusCode, `${from} ${JSON.stringify(cursors)}`).toBe(200);
        expect(res.json<ConnectionView>()).toMatchObject({
          status: expected,
          statusReason: null,
          state: { status: expected, reason: null },
        });
        expect((await row(id)).cursors).toEqual(cursors);
        expect(await pullJob(id)).toEqual({ connectionId: id, reason: 'resumed by an admin' });
        const entries = await audits(id);
        expect(entries).toHaveLength(before + 1);
        expect(entries.at(-1)).toMatchObject({
          action: 'connection.resumed',
          details: { previousStatus: from, status: expected },
        });
      }
    });

    it('resuming a running connection changes nothing but still pulls it', async () => {
      const id = await connect();
      await setRow(id, { status: 'live', cursors: { live: { phase: 'pull' } } });
      await t.pullQueue.obliterate({ force: true });
      const res = await act(a.adminKey, id, 'resume');
      expect(res.statusCode).toBe(200);
      expect(res.json<ConnectionView>().status).toBe('live');
      expect(await audits(id)).toEqual([]);
      expect(await pullJob(id)).toEqual({ connectionId: id, reason: 'resumed by an admin' });
    });

    it('a needs_reauth connection is 409 credentials_required for resume and resync, and stays as it was', async () => {
      const id = await connect();
      await setRow(id, { status: 'needs_reauth', statusReason: 'token revoked', cursors: { live: {} } });
      await t.pullQueue.obliterate({ force: true });
      for (const action of ['resume', 'resync'] as const) {
        const res = await act(a.adminKey, id, action);
        expect(errorOf(res)).toEqual([409, 'credentials_required']);
        expect(res.json<ErrorBody>().error.message).toContain('/credentials');
      }
      expect(await row(id)).toMatchObject({ status: 'needs_reauth', statusReason: 'token revoked' });
      expect(await pullJob(id)).toBeUndefined();
      expect(await audits(id)).toEqual([]);
      // New credentials are how it comes back (the same rule resume uses).
      const replaced = await call(a.adminKey, 'PUT', `/api/v1/connections/${id}/credentials`, {
        credentials: { privateAppToken: (await tokenOf(portalOf.get(id))).privateAppToken },
      });
      expect(replaced.json<ConnectionView>().status).toBe('live');
    });
  });

  describe('resync', () => {
    it('drops both cursors, restarts the backfill from zero and queues a pull', async () => {
      const id = await connect();
      await setRow(id, {
        status: 'live',
        cursors: { live: { phase: 'pull' }, backfill: { after: '9' }, other: { keep: 1 } },
        backfillSeen: 500,
        backfillTotal: 600,
      });
      await t.pullQueue.obliterate({ force: true });
      const res = await act(a.adminKey, id, 'resync');
      expect(res.statusCode).toBe(200);
      expect(res.json<ConnectionView>()).toMatchObject({
        status: 'backfilling',
        statusReason: RESYNC_REASON,
        state: { status: 'backfilling', backfill: { seen: 0, estimatedTotal: null } },
      });
      expect((await row(id)).cursors).toEqual({ other: { keep: 1 } });
      expect(await pullJob(id)).toEqual({ connectionId: id, reason: 'full resync' });
      expect(await audits(id)).toMatchObject([
        { action: 'connection.resync_requested', details: { previousStatus: 'live', status: 'backfilling' } },
      ]);
    });

    it('a paused connection is 409 connection_paused: it stays paused, cursor and all', async () => {
      const id = await connect();
      const cursors = { live: { phase: 'pull' } };
      await setRow(id, { status: 'paused', statusReason: PAUSED_REASON, cursors, backfillSeen: 7 });
      const res = await act(a.adminKey, id, 'resync');
      expect(errorOf(res)).toEqual([409, 'connection_paused']);
      expect(await row(id)).toMatchObject({ status: 'paused', cursors, backfillSeen: 7 });
      expect(await audits(id)).toEqual([]);
    });
  });

  describe('who may', () => {
    const requests = (id: string): [Method, string][] => [
      ['POST', `/api/v1/connections/${id}/pause`],
      ['POST', `/api/v1/connections/${id}/resume`],
      ['POST', `/api/v1/connections/${id}/resync`],
      ['DELETE', `/api/v1/connections/${id}`],
      ['DELETE', `/api/v1/connections/${id}?data=erase`],
    ];

    it("another workspace's id or an unknown one is 404, a sales key 403, and nothing changes", async () => {
      const id = await connect();
      await setRow(id, { status: 'live', cursors: { live: { phase: 'pull' } } });
      await t.pullQueue.obliterate({ force: true });
      const before = await row(id);
      for (const [method, url] of requests(id)) {
        expect(errorOf(await call(b.adminKey, method, url)), `B admin ${method} ${url}`).toEqual([
          404,
          'not_found',
        ]);
        expect(errorOf(await call(salesKey, method, url)), `sales ${method} ${url}`).toEqual([
          403,
          'forbidden',
        ]);
      }
      for (const [method, url] of requests(randomUUID()))
        expect(errorOf(await call(a.adminKey, method, url)), `${method} ${url}`).toEqual([404, 'not_found']);
      expect(await row(id)).toEqual(before);
      expect(await audits(id)).toEqual([]);
      expect(await pullJob(id)).toBeUndefined();
      expect(await t.prisma.auditLog.count({ where: { workspaceId: b.workspaceId } })).toBe(0);
    });

    it('refuses an unknown data mode with 400', async () => {
      const id = await connect();
      const res = await call(a.adminKey, 'DELETE', `/api/v1/connections/${id}?data=shred`);
      expect(errorOf(res)).toEqual([400, 'validation_failed']);
      expect((await row(id)).status).toBe('pending');
    });
  });

  /**
   * A connection E and another one O of the same workspace, with a row of every kind that names
   * E: X is known to both, Y only to E (with Z merged into it), W only to O.
   */
  async function seedLinkedData() {
    const e = await connect();
    const o = await connect();
    for (const id of [e, o]) await setRow(id, { status: 'live', cursors: { live: { phase: 'pull' } } });
    const ws = a.workspaceId;
    const [x, y, z, w] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const sql = t.prisma.$executeRawUnsafe.bind(t.prisma);
    for (const [entity, merged] of [
      [x, null],
      [y, null],
      [z, y],
      [w, null],
    ] as const)
      await sql(
        `INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, merged_into)
         VALUES ($1::uuid, $2::uuid, 'person', $3, $4::jsonb, $5::uuid)`,
        entity,
        ws,
        `person ${entity}`,
        JSON.stringify({ email: `${entity}@acme.test` }),
        merged,
      );
    for (const [conn, ext, entity] of [
      [e, 'e-x', x],
      [o, 'o-x', x],
      [e, 'e-y', y],
      [o, 'o-w', w],
    ] as const)
      await sql(
        `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
         VALUES ($1::uuid, $2::uuid, 'person', $3, $4::uuid)`,
        ws,
        conn,
        ext,
        entity,
      );
    for (const entity of [x, y, z, w]) {
      await sql(
        `INSERT INTO entity_doc (entity_id, workspace_id, doc) VALUES ($1::uuid, $2::uuid, '\\x00'::bytea)`,
        entity,
        ws,
      );
      await sql(
        `INSERT INTO entity_doc_change (entity_id, seq, chunk) VALUES ($1::uuid, 1, '\\x00'::bytea)`,
        entity,
      );
      await sql(
        `INSERT INTO match_key (workspace_id, entity_type, kind, value, entity_id)
         VALUES ($1::uuid, 'person', 'email', $2, $3::uuid)`,
        ws,
        `${entity}@acme.test`,
        entity,
      );
      await sql(
        `INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates)
         VALUES ($1::uuid, $2::uuid, $3::uuid, 'jobTitle', 'concurrent', 'manual', '[]'::jsonb)`,
        randomUUID(),
        ws,
        entity,
      );
    }
    for (const [entity, conn] of [
      [x, e],
      [y, e],
      [x, o],
      [w, o],
    ] as const)
      await sql(
        `INSERT INTO entity_synced_heads (entity_id, connection_id, heads) VALUES ($1::uuid, $2::uuid, ARRAY['h'])`,
        entity,
        conn,
      );
    await sql(
      `INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score)
       VALUES ($1::uuid, $2::uuid, 'person', $3::uuid, $4::uuid, 0.8)`,
      randomUUID(),
      ws,
      y,
      w,
    );
    for (const [conn, entity, op, status, key] of [
      [e, x, 'update', 'pending', 'e-x-1'],
      [e, y, 'update', 'sending', 'e-y-1'],
      [e, x, 'update', 'sent', 'e-x-0'],
      [o, y, 'create', 'pending', 'o-y-create'],
      [o, x, 'update', 'pending', 'o-x-1'],
    ] as const)
      await sql(
        `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key, status)
         VALUES ($1::uuid, $2::uuid, 'person', $3::uuid, $4, '{}'::jsonb, ARRAY['h'], $5, $6)`,
        ws,
        entity,
        conn,
        op,
        key,
        status,
      );
    for (const [conn, entity, ext] of [
      [e, x, 'e-x'],
      [o, x, 'o-x'],
    ] as const)
      await sql(
        `INSERT INTO write_receipt (connection_id, idempotency_key, workspace_id, entity_id, entity_type, external_id,
                                    content_hash, fields, heads)
         VALUES ($1::uuid, $2, $3::uuid, $4::uuid, 'person', $5, 'h', '{}'::jsonb, ARRAY['h'])`,
        conn,
        `r-${ext}`,
        ws,
        entity,
        ext,
      );
    for (const [conn, ext] of [
      [e, 'e-x'],
      [e, 'e-y'],
      [o, 'o-x'],
    ] as const)
      await sql(
        `INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                                   external_id, op, event_time)
         VALUES (0, $1, $2::uuid, $3::uuid, $4, 'person', $5, 'upsert', now())`,
        nextOffset++,
        ws,
        conn,
        `${ext}:1`,
        ext,
      );
    await sql(
      `INSERT INTO push_subscription (id, connection_id, workspace_id, token_ciphertext, token_key_id, expires_at)
       VALUES ($1, $2::uuid, $3::uuid, '\\x00'::bytea, 'k', now() + interval '1 day')`,
      `channel-${e}`,
      e,
      ws,
    );
    for (const conn of [e, o])
      await sql(
        `INSERT INTO dead_letter (id, workspace_id, source, connection_id, payload, error_code, error_message)
         VALUES ($1::uuid, $2::uuid, 'push', $3::uuid, '{}'::jsonb, 'HandlerFailed', 'failed')`,
        randomUUID(),
        ws,
        conn,
      );
    return { e, o, x, y, z, w };
  }

  const countOf = async (table: string, where: string, ...values: unknown[]): Promise<number> => {
    const [found] = await t.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
      ...values,
    );
    return found?.n ?? 0;
  };
  const outboxOf = async (connectionId: string) =>
    (
      await t.prisma.outbox.findMany({
        where: { connectionId },
        orderBy: { idempotencyKey: 'asc' },
        select: { idempotencyKey: true, status: true },
      })
    ).map((r) => `${r.idempotencyKey}:${r.status}`);
  const entitiesLeft = async (...ids: string[]) =>
    (await t.prisma.entity.findMany({ where: { id: { in: ids } }, select: { id: true } }))
      .map((r) => r.id)
      .sort();

  describe('disconnect, keeping the data', () => {
    let seeded: Awaited<ReturnType<typeof seedLinkedData>>;

    it('stops it for good: credentials, links and pending writes go; the records and the log stay', async () => {
      seeded = await seedLinkedData();
      const { e, o, x, y, z, w } = seeded;
      // No `data`: keep is the default.
      const res = await call(a.adminKey, 'DELETE', `/api/v1/connections/${e}`);
      expect(res.statusCode).toBe(200);
      expect(res.json<ConnectionView>()).toMatchObject({
        id: e,
        status: 'disconnected',
        statusReason: DISCONNECTED_KEPT_REASON,
        hasCredentials: false,
      });
      const after = await row(e);
      expect([after.credentialsCiphertext, after.credentialsKeyId]).toEqual([null, null]);

      expect(await entitiesLeft(x, y, z, w)).toEqual([x, y, z, w].sort());
      expect((await t.prisma.entity.findUniqueOrThrow({ where: { id: y } })).fields).toEqual({
        email: `${y}@acme.test`,
      });
      expect(await countOf('source_link', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('source_link', 'connection_id = $1::uuid', o)).toBe(2);
      expect(await outboxOf(e)).toEqual(['e-x-0:sent', 'e-x-1:superseded', 'e-y-1:superseded']);
      expect(await outboxOf(o)).toEqual(['o-x-1:pending', 'o-y-create:pending']);
      expect(await countOf('change_event', 'connection_id = $1::uuid', e)).toBe(2);
      expect(await countOf('push_subscription', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('write_receipt', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('write_receipt', 'connection_id = $1::uuid', o)).toBe(1);
      expect(await countOf('entity_synced_heads', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('entity_synced_heads', 'connection_id = $1::uuid', o)).toBe(2);
      expect(await countOf('entity_doc', 'entity_id = ANY($1::uuid[])', [x, y, z, w])).toBe(4);
      expect(await countOf('dead_letter', 'connection_id = $1::uuid', e)).toBe(1);

      expect(await audits(e)).toMatchObject([
        {
          action: 'connection.disconnected',
          details: {
            data: 'keep',
            previousStatus: 'live',
            sourceLinks: 2,
            supersededWrites: 2,
            deletedWrites: 0,
            changeEvents: 0,
            entities: 0,
            deadLetters: 0,
          },
        },
      ]);
    });

    it('disconnecting again answers it as it is; nothing else can be done to it', async () => {
      const { e } = seeded;
      const again = await call(a.adminKey, 'DELETE', `/api/v1/connections/${e}?data=keep`);
      expect(again.statusCode).toBe(200);
      expect(again.json<ConnectionView>().status).toBe('disconnected');
      expect(errorOf(await call(a.adminKey, 'DELETE', `/api/v1/connections/${e}?data=erase`))).toEqual([
        409,
        'connection_disconnected',
      ]);
      for (const action of ['pause', 'resume', 'resync'] as const)
        expect(errorOf(await act(a.adminKey, e, action)), action).toEqual([409, 'connection_disconnected']);
      const replaced = await call(a.adminKey, 'PUT', `/api/v1/connections/${e}/credentials`, {
        credentials: { privateAppToken: (await tokenOf(portalOf.get(e))).privateAppToken },
      });
      expect(errorOf(replaced)).toEqual([409, 'connection_disconnected']);
      expect((await row(e)).credentialsCiphertext).toBeNull();
      expect(await countOf('change_event', 'connection_id = $1::uuid', e)).toBe(2);
      expect(await audits(e)).toHaveLength(1);
    });
  });

  describe('disconnect, erasing what only it knew', () => {
    it('deletes its events, links and writes and the records only it knew; shared records stay', async () => {
      const { e, o, x, y, z, w } = await seedLinkedData();
      const res = await call(a.adminKey, 'DELETE', `/api/v1/connections/${e}?data=erase`);
      expect(res.statusCode).toBe(200);
      expect(res.json<ConnectionView>()).toMatchObject({
        status: 'disconnected',
        statusReason: DISCONNECTED_ERASED_REASON,
        hasCredentials: false,
      });

      // Y and Z (merged into Y) were E's alone; X is O's too; W is O's.
      expect(await entitiesLeft(x, y, z, w)).toEqual([x, w].sort());
      for (const table of ['entity_doc', 'entity_doc_change', 'merge_conflict', 'match_key'])
        expect(await countOf(table, 'entity_id = ANY($1::uuid[])', [y, z]), table).toBe(0);
      for (const table of ['entity_doc', 'entity_doc_change', 'merge_conflict', 'match_key'])
        expect(await countOf(table, 'entity_id = ANY($1::uuid[])', [x, w]), table).toBe(2);
      expect(await countOf('possible_duplicate', 'entity_a = $1::uuid OR entity_b = $1::uuid', y)).toBe(0);
      expect(await countOf('source_link', 'connection_id = $1::uuid', e)).toBe(0);
      expect(
        (
          await t.prisma.sourceLink.findMany({ where: { connectionId: o }, orderBy: { externalId: 'asc' } })
        ).map((l) => `${l.externalId}→${l.entityId}`),
      ).toEqual([`o-w→${w}`, `o-x→${x}`]);
      expect(await outboxOf(e)).toEqual([]);
      // O's create of Y goes with Y; its write of X stays.
      expect(await outboxOf(o)).toEqual(['o-x-1:pending']);
      expect(await countOf('change_event', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('change_event', 'connection_id = $1::uuid', o)).toBe(1);
      expect(await countOf('dead_letter', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('dead_letter', 'connection_id = $1::uuid', o)).toBe(1);
      expect(await countOf('write_receipt', 'connection_id = $1::uuid', e)).toBe(0);
      expect(await countOf('write_receipt', 'connection_id = $1::uuid', o)).toBe(1);
      expect(await countOf('entity_synced_heads', 'entity_id = ANY($1::uuid[])', [x, w])).toBe(2);
      expect(await countOf('push_subscription', 'connection_id = $1::uuid', e)).toBe(0);
      expect((await row(o)).status).toBe('live');

      expect(await audits(e)).toMatchObject([
        {
          action: 'connection.disconnected',
          details: {
            data: 'erase',
            previousStatus: 'live',
            sourceLinks: 2,
            supersededWrites: 0,
            deletedWrites: 4,
            changeEvents: 2,
            entities: 2,
            deadLetters: 1,
          },
        },
      ]);

      // Again, either way: answered as it is, not audited twice.
      for (const data of ['erase', 'keep']) {
        const again = await call(a.adminKey, 'DELETE', `/api/v1/connections/${e}?data=${data}`);
        expect(again.statusCode, data).toBe(200);
        expect(again.json<ConnectionView>().statusReason).toBe(DISCONNECTED_ERASED_REASON);
      }
      expect(await audits(e)).toHaveLength(1);
    });
  });

  describe('webhooks while paused', () => {
    it('a HubSpot webhook for a paused connection is answered 200 and not taken in (the resume pull reads it)', async () => {
      const portal = 7000 + Math.floor(Math.random() * 900);
      const id = await connect(portal);
      await setRow(id, { status: 'paused', statusReason: PAUSED_REASON, cursors: { live: {} } });
      const body = JSON.stringify([
        {
          eventId: 1,
          subscriptionId: 7,
          portalId: portal,
          appId: 999,
          occurredAt: Date.now() - 1_000,
          subscriptionType: 'contact.propertyChange',
          attemptNumber: 0,
          objectId: 101,
          changeSource: 'CRM_UI',
          sourceId: 'userId:1',
          propertyName: 'firstname',
          propertyValue: 'Ada',
        },
      ]);
      const timestamp = String(Date.now());
      const signature = createHmac('sha256', HUBSPOT_SECRET)
        .update(`POST${PUBLIC_BASE_URL}/webhooks/hubspot${body}${timestamp}`, 'utf8')
        .digest('base64');
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks/hubspot',
        headers: {
          'content-type': 'application/json',
          'x-hubspot-signature-v3': signature,
          'x-hubspot-request-timestamp': timestamp,
        },
        payload: body,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ outcome: 'ignored', changes: 0 });
      expect(await t.prisma.changeEvent.count({ where: { connectionId: id } })).toBe(0);

      await t.pullQueue.obliterate({ force: true });
      expect((await act(a.adminKey, id, 'resume')).json<ConnectionView>().status).toBe('live');
      expect(await pullJob(id)).toEqual({ connectionId: id, reason: 'resumed by an admin' });
    });
  });

  it('documents every route with its errors', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: unknown[] }>>;
    }>();
    for (const action of ['pause', 'resume', 'resync']) {
      const op = doc.paths[`/api/v1/connections/{id}/${action}`]?.post;
      expect(Object.keys(op?.responses ?? {}).sort(), action).toEqual([
        '200',
        '400',
        '401',
        '403',
        '404',
        '409',
      ]);
    }
    const disconnect = doc.paths['/api/v1/connections/{id}']?.delete;
    expect(Object.keys(disconnect?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
    ]);
    expect(disconnect?.parameters).toContainEqual(
      expect.objectContaining({
        name: 'data',
        in: 'query',
        schema: expect.objectContaining({ enum: ['keep', 'erase'], default: 'keep' }),
      }),
    );
    expect(Object.keys(doc.paths['/api/v1/connections/{id}/credentials']?.put?.responses ?? {})).toContain(
      '409',
    );
  });

  it('never returns the credentials', () => {
    expect(tokens.length).toBeGreaterThan(10);
    for (const token of tokens) expect(bodies.join('\n')).not.toContain(token);
    expect(bodies.join('\n')).not.toMatch(/ciphertext|credentialsKeyId|privateAppToken/i);
  });
});
