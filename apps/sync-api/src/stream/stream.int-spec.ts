import type { AddressInfo } from 'node:net';
import { ENTITY_CHANNEL, type EntityChanged } from '@syncline/core';
import { Client } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signInAs } from '../testing/sign-in';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { EntityChangeListener, LISTENER_APPLICATION_NAME } from './entity-change.listener';
import { MAX_STREAMS_PER_KEY, StreamService } from './stream.service';
import { type OpenedStream, openEventStream, type ReceivedEvent } from './testing/sse-client';

// The API on a real port, streams opened with fetch, changes announced with pg_notify on the
// test database exactly as the sync stage does.

describe('GET /api/v1/stream', () => {
  let t: TestApp;
  let url: string;
  let notifier: Client;
  let service: StreamService;
  let listener: EntityChangeListener;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  const opened: OpenedStream[] = [];

  const open = async (key: string | null, query = '', headers: Record<string, string> = {}) => {
    const result = await openEventStream(`${url}/api/v1/stream${query}`, {
      ...(key === null ? {} : bearer(key)),
      ...headers,
    });
    if ('opened' in result) opened.push(result.opened);
    return result;
  };
  const mustOpen = async (key: string, query = '', headers: Record<string, string> = {}) => {
    const result = await open(key, query, headers);
    if (!('opened' in result)) throw new Error(`refused: ${JSON.stringify(result.refused)}`);
    return result.opened;
  };

  let entitySeq = 0;
  const entityId = () => `00000000-0000-4000-8000-${String(++entitySeq).padStart(12, '0')}`;
  const notify = async (change: EntityChanged) => {
    await notifier.query('SELECT pg_notify($1, $2)', [ENTITY_CHANNEL, JSON.stringify(change)]);
  };
  const changeOf = (event: ReceivedEvent) => JSON.parse(event.data) as { id: string; type: string };
  const isChangeOf = (id: string) => (event: ReceivedEvent) =>
    event.event === 'record.changed' && changeOf(event).id === id;

  /** Waits until the server has forgotten streams down to `expected` (the close is seen asynchronously). */
  const settles = async (probe: () => number, expected: number) => {
    const deadline = Date.now() + 5_000;
    while (probe() !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(probe()).toBe(expected);
  };

  beforeAll(async () => {
    t = await startTestApp('stream');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    service = t.app.get(StreamService);
    listener = t.app.get(EntityChangeListener);
    a = await seedWorkspace(t.prisma, 'Stream A');
    b = await seedWorkspace(t.prisma, 'Stream B');
    notifier = new Client({ connectionString: t.db.url });
    await notifier.connect();
    expect(listener.listening).toBe(true);
  });

  // Every test starts with no stream open, which also checks that closing frees them all.
  afterEach(async () => {
    for (const stream of opened.splice(0)) stream.close();
    await settles(() => service.openStreams(), 0);
  });

  afterAll(async () => {
    await notifier?.end();
    // After an aborted response, fetch's connection pool (undici) opens a spare connection
    // that never sends a request; the server's close would wait out its headers timeout.
    t?.app.getHttpServer().closeAllConnections();
    await t?.close();
  });

  it('answers with an event stream and delivers a change of the workspace within a second; never to another workspace', async () => {
    const streamA = await mustOpen(a.adminKey);
    const streamB = await mustOpen(b.adminKey);
    expect(streamA.status).toBe(200);
    expect(streamA.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(streamA.headers.get('cache-control')).toContain('no-cache');
    expect(streamA.headers.get('x-request-id')).toEqual(expect.any(String));

    const idA = entityId();
    const sent = performance.now();
    await notify({ workspaceId: a.workspaceId, id: idA, type: 'person', version: 3 });
    const received = await streamA.next(isChangeOf(idA), 1_000);
    expect(received.receivedAt - sent).toBeLessThan(1_000);
    expect(JSON.parse(received.data)).toEqual({ id: idA, type: 'person', version: 3 });
    expect(Number(received.id)).toBeGreaterThan(0);

    // Notifications arrive in order and fan out in order: once B has its own later change,
    // A's would have reached B before it, had it been going to.
    const idB = entityId();
    await notify({ workspaceId: b.workspaceId, id: idB, type: 'person', version: 1 });
    await streamB.next(isChangeOf(idB), 1_000);
    expect(streamB.events.map((e) => changeOf(e).id)).toEqual([idB]);
    expect(streamA.events.some(isChangeOf(idB))).toBe(false);

    // Ids increase on a stream.
    const idA2 = entityId();
    await notify({ workspaceId: a.workspaceId, id: idA2, type: 'deal', version: 1 });
    const second = await streamA.next(isChangeOf(idA2), 1_000);
    expect(Number(second.id)).toBeGreaterThan(Number(received.id));
  });

  it('sends only the types asked for with ?types=', async () => {
    const deals = await mustOpen(a.adminKey, '?types=deal,company');
    const person = entityId();
    const deal = entityId();
    const company = entityId();
    await notify({ workspaceId: a.workspaceId, id: person, type: 'person', version: 1 });
    await notify({ workspaceId: a.workspaceId, id: deal, type: 'deal', version: 1 });
    await notify({ workspaceId: a.workspaceId, id: company, type: 'company', version: 2 });
    await deals.next(isChangeOf(company), 1_000);
    expect(deals.events.map((e) => changeOf(e).id)).toEqual([deal, company]);
  });

  it('refuses an unknown type in the filter with 400', async () => {
    const result = await open(a.adminKey, '?types=person,spaceship');
    expect('refused' in result && result.refused.status).toBe(400);
    expect('refused' in result && result.refused.body).toMatchObject({
      error: { code: 'validation_failed', message: expect.stringContaining('types') },
    });
  });

  it('forgets a stream when its client disconnects', async () => {
    const kept = await mustOpen(b.adminKey);
    const stream = await mustOpen(b.adminKey);
    expect(service.openStreams({ workspaceId: b.workspaceId })).toBe(2);
    stream.close();
    await settles(() => service.openStreams({ workspaceId: b.workspaceId }), 1);
    // The stream left still gets the workspace's changes; the closed one nothing.
    const id = entityId();
    await notify({ workspaceId: b.workspaceId, id, type: 'task', version: 1 });
    await kept.next(isChangeOf(id), 1_000);
    expect(stream.events.some(isChangeOf(id))).toBe(false);
    kept.close();
    await settles(() => service.openStreams(), 0);
  });

  it('401 without a key, and for a key in the query string', async () => {
    const none = await open(null);
    expect('refused' in none && none.refused.status).toBe(401);
    expect('refused' in none && none.refused.body).toEqual({
      error: { code: 'unauthorized', message: expect.any(String) },
    });
    for (const query of [`?access_token=${a.adminKey}`, `?key=${a.adminKey}`]) {
      const inQuery = await open(null, query);
      expect('refused' in inQuery && inQuery.refused.status).toBe(401);
    }
    // A key sent where it does not belong is not written to the log either.
    // sk_<prefix>_<secret>; the secret itself may hold `_`.
    const [, secret] = /^sk_[0-9a-f]+_(.+)$/.exec(a.adminKey)!;
    expect(t.logs.join('\n')).not.toContain(secret);
  });

  it(`429 beyond ${MAX_STREAMS_PER_KEY} open streams of one key; a closed one frees its place`, async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(a.adminKey),
      payload: { name: 'dashboard', role: 'sales' },
    });
    expect(created.statusCode).toBe(201);
    const salesKey = created.json<{ key: string }>().key;

    const streams: OpenedStream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i++) streams.push(await mustOpen(salesKey));
    const refused = await open(salesKey);
    expect('refused' in refused && refused.refused.status).toBe(429);
    expect('refused' in refused && refused.refused.body).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining(String(MAX_STREAMS_PER_KEY)) },
    });
    // Another key of the same workspace has its own share.
    const other = await open(a.adminKey);
    expect('opened' in other).toBe(true);

    streams[0]!.close();
    const apiKeyId = (await t.prisma.apiKey.findFirstOrThrow({ where: { name: 'dashboard' } })).id;
    await settles(() => service.openStreams({ actor: apiKeyId }), MAX_STREAMS_PER_KEY - 1);
    const again = await open(salesKey);
    expect('opened' in again).toBe(true);
  });

  it('a signed-in member streams with the session cookie, counted as that member', async () => {
    const member = await signInAs(t.app, {
      workspaceId: a.workspaceId,
      email: 'viewer@a.test',
      role: 'sales',
    });
    const result = await open(null, '', { cookie: member.cookie });
    if (!('opened' in result)) throw new Error(`refused: ${JSON.stringify(result.refused)}`);
    expect(service.openStreams({ actor: `member:${member.memberId}` })).toBe(1);
    const id = entityId();
    await notify({ workspaceId: a.workspaceId, id, type: 'person', version: 1 });
    await result.opened.next(isChangeOf(id), 1_000);
  });

  it('a heartbeat comment reaches every stream', async () => {
    const stream = await mustOpen(b.adminKey);
    service.beat();
    await stream.comment('heartbeat', 1_000);
  });

  it('a client resuming with Last-Event-ID is told to refetch', async () => {
    const stream = await mustOpen(a.adminKey, '', { 'last-event-id': '12' });
    const first = await stream.next(() => true, 1_000);
    expect(first.event).toBe('refetch');
    expect(JSON.parse(first.data)).toEqual({ reason: 'resumed' });
  });

  it('when the LISTEN connection drops it reconnects, tells every stream to refetch, and delivers again', async () => {
    const streamA = await mustOpen(a.adminKey);
    const streamB = await mustOpen(b.adminKey);
    const { rows } = await notifier.query<{ terminated: boolean }>(
      `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(rows).toEqual([{ terminated: true }]);
    for (const stream of [streamA, streamB]) {
      const refetch = await stream.next((e) => e.event === 'refetch', 10_000);
      expect(JSON.parse(refetch.data)).toEqual({ reason: 'listener_reconnected' });
    }
    expect(listener.listening).toBe(true);
    const id = entityId();
    await notify({ workspaceId: a.workspaceId, id, type: 'person', version: 9 });
    await streamA.next(isChangeOf(id), 1_000);
  });

  it('documents the route: an event stream, 400, 401 and 429', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    const doc = res.json<{
      paths: Record<
        string,
        { get?: { security?: unknown[]; responses: Record<string, { content?: object }> } }
      >;
    }>();
    const get = doc.paths['/api/v1/stream']?.get;
    expect(Object.keys(get?.responses ?? {}).sort()).toEqual(['200', '400', '401', '429']);
    expect(Object.keys(get?.responses['200']?.content ?? {})).toEqual(['text/event-stream']);
    expect(Object.keys(get?.responses['429']?.content ?? {})).toEqual(['application/json']);
    expect(get?.security).toEqual([{ bearer: [] }]);
  });
});
