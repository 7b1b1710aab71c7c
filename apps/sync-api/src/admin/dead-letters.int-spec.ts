import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts } from '../testing/provider-accounts';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface LetterBody {
  id: string;
  source: string;
  status: string;
  eventKey: string | null;
  resolvedAt: string | null;
  payload?: unknown;
}
interface PageBody {
  data: LetterBody[];
  nextCursor: string | null;
}
interface ErrorBody {
  error: { code: string; message: string };
}

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const EVENT_TIME = '2026-11-30T09:00:00.000Z';

describe('dead letters', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let connA: string;
  let connA2: string;
  let connB: string;
  // Letters of workspace A, oldest first, and B's one.
  const letters: Record<'log' | 'push' | 'queue' | 'foreign' | 'retried' | 'other', string> = {
    log: '',
    push: '',
    queue: '',
    foreign: '',
    retried: '',
    other: '',
  };
  let letterB: string;

  const call = (key: string, method: 'GET' | 'POST', url: string): Promise<LightMyRequestResponse> =>
    t.app.inject({ method, url, headers: bearer(key) });

  let accounts: ProviderAccounts;
  /** A portal of the emulator, connected with a private app token of it (which proves it). */
  const connect = async (key: string, externalAccountId: string): Promise<string> => {
    const { privateAppToken } = await accounts.hubspot(Number(externalAccountId));
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/connections',
      headers: bearer(key),
      payload: { provider: 'hubspot', externalAccountId, credentials: { privateAppToken } },
    });
    expect(res.statusCode).toBe(201);
    return res.json<{ id: string }>().id;
  };

  /** A log event as the consumer group stores it in dead_letter.payload. */
  const logEvent = (workspaceId: string, connectionId: string, eventKey: string) => ({
    partition: 3,
    offset: 7,
    workspaceId,
    connectionId,
    eventKey,
    entityType: 'person',
    externalId: 'contact-1',
    op: 'upsert',
    fields: { email: 'ana@example.com', firstName: 'Ana' },
    fieldTimes: { email: EVENT_TIME },
    eventTime: EVENT_TIME,
    ingestedAt: EVENT_TIME,
    providerVersion: '42',
    origin: null,
  });

  const seedLetter = async (letter: {
    workspaceId: string;
    source: string;
    minutesAgo: number;
    payload: object;
    connectionId?: string;
    eventKey?: string;
    offset?: number;
    status?: string;
  }): Promise<string> => {
    const rows = await t.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id, event_key,
                               payload, error_code, error_message, attempts, status, created_at)
      VALUES (gen_random_uuid(), ${letter.workspaceId}::uuid, ${letter.source},
              ${letter.source === 'log' ? 'sync' : null}, ${letter.offset === undefined ? null : 3},
              ${letter.offset ?? null}::bigint, ${letter.connectionId ?? null}::uuid, ${letter.eventKey ?? null},
              ${JSON.stringify(letter.payload)}::jsonb, 'HandlerFailed', 'boom', 5,
              ${letter.status ?? 'open'}::dead_letter_status, now() - make_interval(mins => ${letter.minutesAgo}))
      RETURNING id::text`;
    return rows[0]!.id;
  };

  const outbox = async (workspaceId: string, connectionId: string, key: string, status: string) => {
    const rows = await t.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads,
                          idempotency_key, status, attempts, last_error)
      VALUES (${workspaceId}::uuid, gen_random_uuid(), 'person', ${connectionId}::uuid, 'update', '{}'::jsonb,
              ARRAY[]::text[], ${key}, ${status}, 5, 'Validation: bad email')
      RETURNING id`;
    return rows[0]!.id;
  };

  let failed1: bigint;
  let failed2: bigint;
  let sent: bigint;
  let failedOfB: bigint;

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('dead_letters', accounts.env);
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    connA = await connect(a.adminKey, '4711');
    connA2 = await connect(a.adminKey, '5150');
    connB = await connect(b.adminKey, '4711');

    failed1 = await outbox(a.workspaceId, connA, 'w1', 'failed');
    failed2 = await outbox(a.workspaceId, connA, 'w2', 'failed');
    sent = await outbox(a.workspaceId, connA, 'w3', 'sent');
    failedOfB = await outbox(b.workspaceId, connB, 'w4', 'failed');

    letters.log = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'log',
      minutesAgo: 60,
      connectionId: connA,
      eventKey: 'contact-1:42',
      offset: 7,
      payload: logEvent(a.workspaceId, connA, 'contact-1:42'),
    });
    letters.push = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'push',
      minutesAgo: 50,
      connectionId: connA,
      // A row of another workspace named in the payload must not be touched.
      payload: {
        outboxIds: [String(failed1), String(failed2), String(sent), String(failedOfB)],
        op: 'update',
      },
    });
    letters.queue = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'queue',
      minutesAgo: 40,
      connectionId: connA2,
      payload: { queue: 'pull', job: 'connection.pull', jobId: 'pull.x', data: {} },
    });
    // A log event naming B's connection, filed under A: the retry must not append it for B.
    letters.foreign = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'log',
      minutesAgo: 30,
      connectionId: connB,
      eventKey: 'contact-9:1',
      offset: 8,
      payload: logEvent(b.workspaceId, connB, 'contact-9:1'),
    });
    letters.retried = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'log',
      minutesAgo: 20,
      connectionId: connA2,
      eventKey: 'contact-2:1',
      offset: 9,
      status: 'retried',
      payload: logEvent(a.workspaceId, connA2, 'contact-2:1'),
    });
    letters.other = await seedLetter({
      workspaceId: a.workspaceId,
      source: 'queue',
      minutesAgo: 10,
      connectionId: connA2,
      payload: { queue: 'push', job: 'connection.push', jobId: 'push.y', data: {} },
    });
    letterB = await seedLetter({
      workspaceId: b.workspaceId,
      source: 'log',
      minutesAgo: 5,
      connectionId: connB,
      eventKey: 'contact-1:42',
      offset: 10,
      payload: logEvent(b.workspaceId, connB, 'contact-1:42'),
    });
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  it('lists newest first, page by page, without payloads', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let url = '/api/v1/dead-letters?limit=4';
    for (let page = 0; page < 5; page++) {
      const res = await call(a.adminKey, 'GET', url);
      expect(res.statusCode).toBe(200);
      const body = res.json<PageBody>();
      sizes.push(body.data.length);
      seen.push(...body.data.map((l) => l.id));
      for (const letter of body.data) expect(letter).not.toHaveProperty('payload');
      if (body.nextCursor === null) break;
      url = `/api/v1/dead-letters?limit=4&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    expect(sizes).toEqual([4, 2]);
    expect(seen).toEqual([
      letters.other,
      letters.retried,
      letters.foreign,
      letters.queue,
      letters.push,
      letters.log,
    ]);
  });

  it('filters by status and by connection', async () => {
    const retried = await call(a.adminKey, 'GET', '/api/v1/dead-letters?status=retried');
    expect(retried.json<PageBody>().data.map((l) => l.id)).toEqual([letters.retried]);

    const ofConnA2 = await call(a.adminKey, 'GET', `/api/v1/dead-letters?status=open&connectionId=${connA2}`);
    expect(ofConnA2.json<PageBody>()).toEqual({
      data: [expect.objectContaining({ id: letters.other }), expect.objectContaining({ id: letters.queue })],
      nextCursor: null,
      total: 2,
    });
    // The total counts every match, not the page.
    const firstOfAll = await call(a.adminKey, 'GET', '/api/v1/dead-letters?limit=1');
    expect(firstOfAll.json<PageBody & { total: number }>()).toMatchObject({ total: 6 });
    expect(firstOfAll.json<PageBody>().data).toHaveLength(1);
  });

  it('reads one letter with its payload', async () => {
    const res = await call(a.adminKey, 'GET', `/api/v1/dead-letters/${letters.log}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: letters.log,
      source: 'log',
      groupName: 'sync',
      partition: 3,
      offset: 7,
      connectionId: connA,
      eventKey: 'contact-1:42',
      errorCode: 'HandlerFailed',
      errorMessage: 'boom',
      attempts: 5,
      status: 'open',
      createdAt: expect.any(String),
      resolvedAt: null,
      payload: logEvent(a.workspaceId, connA, 'contact-1:42'),
    });
  });

  it('a log retry appends the event again under #retry-1 and marks the letter retried', async () => {
    const res = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.log}/retry`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      deadLetter: LetterBody;
      retry: { source: string; eventKey: string; offset: number };
    }>();
    expect(body.retry).toMatchObject({ source: 'log', eventKey: 'contact-1:42#retry-1' });
    expect(body.deadLetter).toMatchObject({
      id: letters.log,
      status: 'retried',
      resolvedAt: expect.any(String),
    });

    const events = await t.prisma.changeEvent.findMany({ where: { connectionId: connA } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      workspaceId: a.workspaceId,
      eventKey: 'contact-1:42#retry-1',
      entityType: 'person',
      externalId: 'contact-1',
      op: 'upsert',
      fields: { email: 'ana@example.com', firstName: 'Ana' },
      // The email's time is the event's: the log keeps only the field times that differ.
      fieldTimes: {},
      providerVersion: '42',
      origin: null,
    });
    expect(events[0]!.offset).toBe(BigInt(body.retry.offset));
    expect(events[0]!.eventTime.toISOString()).toBe(EVENT_TIME);

    const row = await t.prisma.deadLetter.findUniqueOrThrow({ where: { id: letters.log } });
    expect(row.status).toBe('retried');
    expect(row.resolvedAt).toBeInstanceOf(Date);
  });

  it('retrying twice is a 409 conflict and appends nothing', async () => {
    const res = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.log}/retry`);
    expect(res.statusCode).toBe(409);
    expect(res.json<ErrorBody>()).toEqual({
      error: { code: 'conflict', message: expect.stringContaining('already retried') },
    });
    expect(await t.prisma.changeEvent.count({ where: { connectionId: connA } })).toBe(1);
    const discard = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.retried}/discard`);
    expect(discard.statusCode).toBe(409);
  });

  it('a letter reopened after a retry gets a key of its own on the next retry', async () => {
    // The consumer group reopens a letter when the same offset fails again.
    await t.prisma.deadLetter.update({
      where: { id: letters.log },
      data: { status: 'open', resolvedAt: null },
    });
    const res = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.log}/retry`);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ retry: { eventKey: string } }>().retry.eventKey).toBe('contact-1:42#retry-2');
    const keys = await t.prisma.changeEvent.findMany({
      where: { connectionId: connA },
      select: { eventKey: true },
    });
    expect(keys.map((k) => k.eventKey).sort()).toEqual(['contact-1:42#retry-1', 'contact-1:42#retry-2']);
  });

  it("a log retry never appends for another workspace's connection; the letter stays open", async () => {
    const res = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.foreign}/retry`);
    expect(res.statusCode).toBe(409);
    expect(res.json<ErrorBody>().error.message).toContain('refused');
    expect(await t.prisma.changeEvent.count({ where: { connectionId: connB } })).toBe(0);
    const row = await t.prisma.deadLetter.findUniqueOrThrow({ where: { id: letters.foreign } });
    expect(row).toMatchObject({ status: 'open', resolvedAt: null });
  });

  it("a push retry sets the workspace's failed outbox rows back to pending", async () => {
    const res = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.push}/retry`);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ retry: unknown; deadLetter: LetterBody }>()).toMatchObject({
      retry: { source: 'push', outboxRowsRequeued: 2 },
      deadLetter: { status: 'retried' },
    });
    const rows = await t.prisma.outbox.findMany({
      where: { id: { in: [failed1, failed2, sent, failedOfB] } },
      orderBy: { id: 'asc' },
      select: { id: true, status: true, attempts: true },
    });
    expect(rows).toEqual([
      { id: failed1, status: 'pending', attempts: 0 },
      { id: failed2, status: 'pending', attempts: 0 },
      { id: sent, status: 'sent', attempts: 5 },
      { id: failedOfB, status: 'failed', attempts: 5 },
    ]);
  });

  it('a letter of another source cannot be retried, only discarded, once', async () => {
    const retry = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.queue}/retry`);
    expect(retry.statusCode).toBe(409);
    expect(retry.json<ErrorBody>().error.message).toContain("source 'queue'");
    expect((await t.prisma.deadLetter.findUniqueOrThrow({ where: { id: letters.queue } })).status).toBe(
      'open',
    );

    const discard = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.queue}/discard`);
    expect(discard.statusCode).toBe(200);
    expect(discard.json<LetterBody>()).toMatchObject({
      id: letters.queue,
      status: 'discarded',
      resolvedAt: expect.any(String),
      payload: { queue: 'pull', jobId: 'pull.x' },
    });
    const again = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.queue}/discard`);
    expect(again.statusCode).toBe(409);
    expect(again.json<ErrorBody>().error.message).toContain('already discarded');
    const retryDiscarded = await call(a.adminKey, 'POST', `/api/v1/dead-letters/${letters.queue}/retry`);
    expect(retryDiscarded.statusCode).toBe(409);
  });

  it("another workspace's admin gets 404 for A's letters and never sees them listed", async () => {
    const message = (res: LightMyRequestResponse) => res.json<ErrorBody>().error.message;
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/retry'],
      ['POST', '/discard'],
    ] as const) {
      const foreign = await call(b.adminKey, method, `/api/v1/dead-letters/${letters.other}${suffix}`);
      expect(foreign.statusCode, `${method} ${suffix}`).toBe(404);
      expect(foreign.json<ErrorBody>().error.code).toBe('not_found');
      // Exactly what a letter that exists nowhere gets: existence is not revealed.
      const missing = await call(b.adminKey, method, `/api/v1/dead-letters/${UNKNOWN_ID}${suffix}`);
      expect(missing.statusCode).toBe(404);
      expect(message(missing)).toBe(message(foreign).replace(letters.other, UNKNOWN_ID));
    }
    expect((await t.prisma.deadLetter.findUniqueOrThrow({ where: { id: letters.other } })).status).toBe(
      'open',
    );

    const listB = await call(b.adminKey, 'GET', '/api/v1/dead-letters');
    expect(listB.json<PageBody>().data.map((l) => l.id)).toEqual([letterB]);
    const byConnection = await call(b.adminKey, 'GET', `/api/v1/dead-letters?connectionId=${connA}`);
    expect(byConnection.json<PageBody>().data).toEqual([]);
    const listA = await call(a.adminKey, 'GET', '/api/v1/dead-letters?limit=200');
    expect(listA.json<PageBody>().data.map((l) => l.id)).not.toContain(letterB);
  });

  it('a sales key gets 403 on every admin route', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/dead-letters'],
      ['GET', `/api/v1/dead-letters/${letters.other}`],
      ['POST', `/api/v1/dead-letters/${letters.other}/retry`],
      ['POST', `/api/v1/dead-letters/${letters.other}/discard`],
      ['GET', '/api/v1/health/sync'],
      ['GET', '/api/v1/audit-log'],
    ] as const) {
      const res = await call(salesKey, method, url);
      expect(res.statusCode, url).toBe(403);
      expect(res.json<ErrorBody>().error.code).toBe('forbidden');
    }
    expect((await t.prisma.deadLetter.findUniqueOrThrow({ where: { id: letters.other } })).status).toBe(
      'open',
    );
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/v1/dead-letters' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('400 validation_failed for a bad cursor, limit, status or id; 404 for an unknown id', async () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const [method, url] of [
      ['GET', '/api/v1/dead-letters?cursor=not-a-cursor'],
      ['GET', `/api/v1/dead-letters?cursor=${encode(['2026-11-30T09:00:00.000Z', "1' OR '1'='1"])}`],
      ['GET', `/api/v1/dead-letters?cursor=${Buffer.from('1 OR 1=1').toString('base64url')}`],
      ['GET', '/api/v1/dead-letters?limit=0'],
      ['GET', '/api/v1/dead-letters?limit=1000'],
      ['GET', '/api/v1/dead-letters?status=pending'],
      ['GET', '/api/v1/dead-letters?connectionId=nope'],
      ['GET', '/api/v1/dead-letters/not-a-uuid'],
      ['POST', '/api/v1/dead-letters/not-a-uuid/retry'],
      ['POST', '/api/v1/dead-letters/not-a-uuid/discard'],
    ] as const) {
      const res = await call(a.adminKey, method, url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json<ErrorBody>().error.code, url).toBe('validation_failed');
    }
    const cursorError = await call(a.adminKey, 'GET', '/api/v1/dead-letters?cursor=not-a-cursor');
    expect(cursorError.json<ErrorBody>().error.message).toBe(
      'invalid request: cursor: not a cursor this API returned',
    );

    for (const [method, url] of [
      ['GET', `/api/v1/dead-letters/${UNKNOWN_ID}`],
      ['POST', `/api/v1/dead-letters/${UNKNOWN_ID}/retry`],
      ['POST', `/api/v1/dead-letters/${UNKNOWN_ID}/discard`],
    ] as const) {
      const res = await call(a.adminKey, method, url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'not_found', message: `no dead letter ${UNKNOWN_ID}` } });
    }
  });

  describe('in bulk', () => {
    const bulk = (key: string, payload: object): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'POST', url: '/api/v1/dead-letters/bulk', headers: bearer(key), payload });
    const statusOf = async (id: string) =>
      (await t.prisma.deadLetter.findUniqueOrThrow({ where: { id } })).status;
    const auditedFor = (ids: string[]) =>
      t.prisma.auditLog.findMany({
        where: { targetId: { in: ids } },
        select: { workspaceId: true, action: true, targetId: true },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
    const fresh: Record<'log1' | 'log2' | 'queue' | 'done' | 'ofB', string> = {
      log1: '',
      log2: '',
      queue: '',
      done: '',
      ofB: '',
    };

    beforeAll(async () => {
      fresh.log1 = await seedLetter({
        workspaceId: a.workspaceId,
        source: 'log',
        minutesAgo: 3,
        connectionId: connA,
        eventKey: 'contact-7:1',
        offset: 11,
        payload: logEvent(a.workspaceId, connA, 'contact-7:1'),
      });
      fresh.log2 = await seedLetter({
        workspaceId: a.workspaceId,
        source: 'log',
        minutesAgo: 3,
        connectionId: connA,
        eventKey: 'contact-8:1',
        offset: 12,
        payload: logEvent(a.workspaceId, connA, 'contact-8:1'),
      });
      fresh.queue = await seedLetter({
        workspaceId: a.workspaceId,
        source: 'queue',
        minutesAgo: 3,
        connectionId: connA2,
        payload: { queue: 'pull', job: 'connection.pull', jobId: 'pull.z', data: {} },
      });
      fresh.done = await seedLetter({
        workspaceId: a.workspaceId,
        source: 'queue',
        minutesAgo: 3,
        status: 'discarded',
        payload: { queue: 'pull', jobId: 'pull.w' },
      });
      fresh.ofB = await seedLetter({
        workspaceId: b.workspaceId,
        source: 'log',
        minutesAgo: 3,
        connectionId: connB,
        eventKey: 'contact-5:1',
        offset: 13,
        payload: logEvent(b.workspaceId, connB, 'contact-5:1'),
      });
    });

    it("retries each letter as its own route would, reporting those it cannot settle; never another workspace's", async () => {
      const events = () =>
        t.prisma.$queryRaw<{ key: string; ws: string }[]>`
          SELECT event_key AS key, workspace_id::text AS ws FROM change_event
           WHERE event_key LIKE 'contact-7:1#%' OR event_key LIKE 'contact-5:1#%' ORDER BY 1`;
      const res = await bulk(a.adminKey, {
        action: 'retry',
        ids: [fresh.log1, fresh.queue, fresh.done, fresh.ofB, UNKNOWN_ID, fresh.log1.toUpperCase()],
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        data: [
          { id: fresh.log1, ok: true, outcome: 'retried', message: null },
          {
            id: fresh.queue,
            ok: false,
            outcome: 'not_retryable',
            message: expect.stringContaining("source 'queue'"),
          },
          {
            id: fresh.done,
            ok: false,
            outcome: 'not_open',
            message: expect.stringContaining('already discarded'),
          },
          { id: fresh.ofB, ok: false, outcome: 'not_found', message: `no dead letter ${fresh.ofB}` },
          { id: UNKNOWN_ID, ok: false, outcome: 'not_found', message: `no dead letter ${UNKNOWN_ID}` },
        ],
        settled: 1,
        failed: 4,
      });
      expect(await statusOf(fresh.log1)).toBe('retried');
      expect(await statusOf(fresh.queue)).toBe('open');
      expect(await statusOf(fresh.ofB)).toBe('open');
      expect(await events()).toEqual([{ key: 'contact-7:1#retry-1', ws: a.workspaceId }]);
      expect(await auditedFor(Object.values(fresh))).toEqual([
        { workspaceId: a.workspaceId, action: 'dead_letter.retried', targetId: fresh.log1 },
      ]);
    });

    it('discards each letter with an audit entry per letter', async () => {
      const res = await bulk(a.adminKey, { action: 'discard', ids: [fresh.log2, fresh.queue, fresh.log1] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<{ data: { outcome: string }[] }>().data.map((one) => one.outcome)).toEqual([
        'discarded',
        'discarded',
        'not_open',
      ]);
      expect([await statusOf(fresh.log2), await statusOf(fresh.queue)]).toEqual(['discarded', 'discarded']);
      expect((await auditedFor([fresh.log2, fresh.queue])).map((e) => [e.action, e.targetId])).toEqual([
        ['dead_letter.discarded', fresh.log2],
        ['dead_letter.discarded', fresh.queue],
      ]);
    });

    it("another workspace's admin gets not_found for every one of A's letters and settles none", async () => {
      const open = await seedLetter({
        workspaceId: a.workspaceId,
        source: 'queue',
        minutesAgo: 2,
        payload: { queue: 'pull', jobId: 'pull.v' },
      });
      for (const action of ['retry', 'discard'] as const) {
        const res = await bulk(b.adminKey, { action, ids: [open] });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({
          data: [{ id: open, ok: false, outcome: 'not_found', message: `no dead letter ${open}` }],
          settled: 0,
          failed: 1,
        });
      }
      expect(await statusOf(open)).toBe('open');
      expect(await auditedFor([open])).toEqual([]);
    });

    it('is for admins only and validates its body', async () => {
      const forbidden = await bulk(salesKey, { action: 'discard', ids: [fresh.ofB] });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json<ErrorBody>().error.code).toBe('forbidden');
      const ids = (n: number) => Array.from({ length: n }, () => UNKNOWN_ID);
      for (const payload of [
        { action: 'retry', ids: [] },
        { action: 'retry', ids: ids(501) },
        { action: 'erase', ids: [UNKNOWN_ID] },
        { action: 'retry', ids: ['not-a-uuid'] },
        { action: 'retry' },
        { action: 'retry', ids: [UNKNOWN_ID], extra: true },
      ]) {
        const res = await bulk(a.adminKey, payload);
        expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
        expect(res.json<ErrorBody>().error.code).toBe('validation_failed');
      }
      const most = await bulk(a.adminKey, { action: 'discard', ids: ids(500) });
      expect(most.statusCode).toBe(200);
      expect(most.json()).toMatchObject({ settled: 0, failed: 1 });
    });
  });

  it('documents every admin route with its responses in OpenAPI', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    const doc = res.json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
    const expected: [string, string, string[]][] = [
      ['/api/v1/dead-letters', 'get', ['200', '400', '401', '403']],
      ['/api/v1/dead-letters/{id}', 'get', ['200', '400', '401', '403', '404']],
      ['/api/v1/dead-letters/{id}/retry', 'post', ['200', '400', '401', '403', '404', '409']],
      ['/api/v1/dead-letters/{id}/discard', 'post', ['200', '400', '401', '403', '404', '409']],
      ['/api/v1/dead-letters/bulk', 'post', ['200', '400', '401', '403']],
      ['/api/v1/health/sync', 'get', ['200', '401', '403']],
      ['/api/v1/audit-log', 'get', ['200', '400', '401', '403']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(Object.keys(operation!.responses).sort(), `${method} ${path}`).toEqual(statuses);
    }
    expect(res.body).toContain('outboxRowsRequeued');
    expect(res.body).toContain('watermarkDelaySeconds');
    expect(res.body).toContain('nextCursor');
  });
});
