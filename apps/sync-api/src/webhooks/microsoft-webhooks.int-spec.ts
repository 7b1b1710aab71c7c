import { randomBytes } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { pullJobIds } from '@syncline/jobs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MicrosoftDirectory,
  type MicrosoftGrant,
  type MicrosoftTestUser,
  microsoftAccountOf,
} from '../connections/oauth-testing';
import { freePort } from '../testing/processes';
import { bearer, scrapeMetrics, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { pushSubscriptionAad } from './webhooks.service';

const PUBLIC_BASE_URL = 'https://sync.example.test';
type Product = 'microsoft-calendar' | 'microsoft-mail' | 'microsoft-todo';

/** A Graph subscription the emulator made after our route answered its handshake, and its clientState. */
interface Subscribed {
  id: string;
  clientState: string;
  connectionId: string;
}

/** Waits until `check` holds (Graph delivers on its own schedule), or fails after `ms`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('Microsoft Graph webhooks (against the emulated Graph)', () => {
  let emulators: RunningEmulators;
  let microsoft: MicrosoftDirectory;
  let t: TestApp;
  /** Where the emulator reaches the API (it listens for this file). */
  let apiUrl: string;
  let a: { workspaceId: string; adminKey: string };
  let ana: MicrosoftTestUser;
  let grant: MicrosoftGrant;
  const connections = {} as Record<Product, string>;
  const subscriptions = {} as Record<Product, Subscribed>;
  const bodies: string[] = [];

  const post = async (
    url: string,
    payload?: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ): Promise<LightMyRequestResponse> => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    bodies.push(res.body);
    return res;
  };
  const notification = (subscription: { id: string; clientState: string }, extra: object = {}) => ({
    subscriptionId: subscription.id,
    subscriptionExpirationDateTime: new Date(Date.now() + 86_400_000).toISOString(),
    clientState: subscription.clientState,
    changeType: 'updated',
    resource: `Users/${ana.id}/Events/AAMkAD`,
    tenantId: ana.tenantId,
    resourceData: { '@odata.type': '#Microsoft.Graph.Event', id: 'AAMkAD' },
    ...extra,
  });
  const notify = (product: Product, ...items: object[]) =>
    post(`/webhooks/${product}`, JSON.stringify({ value: items }));
  const graph = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${emulators.microsoftUrl}/v1.0${path}`, {
      method,
      headers: { authorization: `Bearer ${grant.accessToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  /**
   * Subscribes as a connector does: notification and lifecycle URLs are our route, so Graph's
   * handshake must be answered before it makes the subscription. Then stored as the workers
   * store it, the clientState sealed to the subscription's row.
   */
  const subscribe = async (product: Product, resource: string): Promise<Subscribed> => {
    const clientState = randomBytes(24).toString('base64url');
    const route = `${apiUrl}/webhooks/${product}`;
    const created = await graph<{ id: string; expirationDateTime: string }>('POST', '/subscriptions', {
      changeType: 'created,updated,deleted',
      notificationUrl: route,
      lifecycleNotificationUrl: route,
      resource,
      expirationDateTime: new Date(Date.now() + 2 * 86_400_000).toISOString(),
      clientState,
    });
    const sealed = t.keyring.seal(clientState, pushSubscriptionAad(created.id));
    await t.prisma.pushSubscription.create({
      data: {
        id: created.id,
        connectionId: connections[product],
        workspaceId: a.workspaceId,
        tokenKeyId: sealed.keyId,
        tokenCiphertext: Uint8Array.from(sealed.ciphertext),
        expiresAt: new Date(created.expirationDateTime),
      },
    });
    return { id: created.id, clientState, connectionId: connections[product] };
  };
  const pullOf = (connectionId: string) => t.pullQueue.getJob(pullJobIds(connectionId).primary);
  const expiryOf = async (id: string) =>
    (await t.prisma.pushSubscription.findUniqueOrThrow({ where: { id } })).expiresAt.getTime();

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    microsoft = await MicrosoftDirectory.register(emulators.microsoftUrl);
    // Deliveries at once, and a failed one retried soon, for a short test.
    await microsoft.control('POST', '/_emulator/microsoft/subscriptions/settings', {
      batchWindowMs: 10,
      retryBaseMs: 100,
      retryForMs: 2_000,
    });
    t = await startTestApp('microsoft_webhooks', {
      ...microsoft.env,
      PUBLIC_BASE_URL,
      API_METRICS_PORT: String(await freePort()),
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = await t.app.getUrl();
    a = await seedWorkspace(t.prisma, 'Contoso');
    ana = await microsoft.addUser('ana@contoso.example');
    grant = await microsoft.grant(ana.userPrincipalName);
    for (const product of ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo'] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/connections',
        headers: bearer(a.adminKey),
        payload: {
          provider: product,
          externalAccountId: microsoftAccountOf(ana),
          credentials: { accessToken: grant.accessToken, refreshToken: grant.refreshToken },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      connections[product] = res.json<{ id: string }>().id;
    }
  });
  afterAll(async () => {
    await t?.close();
    await emulators?.close();
  });
  beforeEach(async () => {
    await t.pullQueue.obliterate({ force: true });
  });

  it("Graph's validation handshake on each route is answered: the emulator makes the subscriptions", async () => {
    subscriptions['microsoft-calendar'] = await subscribe('microsoft-calendar', '/me/events');
    subscriptions['microsoft-mail'] = await subscribe('microsoft-mail', "/me/mailFolders('inbox')/messages");
    const lists = await graph<{ value: { id: string; wellknownListName?: string }[] }>(
      'GET',
      '/me/todo/lists',
    );
    const tasks = lists.value.find((l) => l.wellknownListName === 'defaultList') ?? lists.value[0];
    subscriptions['microsoft-todo'] = await subscribe('microsoft-todo', `/me/todo/lists/${tasks!.id}/tasks`);

    const live = await microsoft.control<{ subscriptions: { id: string; notificationUrl: string }[] }>(
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(live.subscriptions.map((s) => [s.id, s.notificationUrl]).sort()).toEqual(
      Object.entries(subscriptions)
        .map(([product, s]) => [s.id, `${apiUrl}/webhooks/${product}`])
        .sort(),
    );
    // The handshake does nothing else: no pull.
    for (const id of Object.values(connections)) expect(await pullOf(id)).toBeUndefined();
  });

  it('the handshake echoes the token URL-decoded as text/plain, with or without a body, and nothing else', async () => {
    const token =
      'Validation: Testing client application reachability for subscription Request-Id: 5c2e + & = é ✓';
    const url = `/webhooks/microsoft-mail?${new URLSearchParams({ validationToken: token })}`;
    const deliveries: [Record<string, string>, string | undefined][] = [
      // As Graph makes it: text/plain, empty.
      [{ 'content-type': 'text/plain; charset=utf-8' }, ''],
      [{ 'content-type': 'text/plain' }, 'a body is ignored'],
      [{}, undefined],
      [{ 'content-type': 'application/json' }, ''],
    ];
    for (const [headers, payload] of deliveries) {
      const res = await post(url, payload, headers);
      expect(res.statusCode, `${JSON.stringify(headers)} ${payload}`).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.body).toBe(token);
    }
    // `+` is a space in a query, as Graph's tokens are encoded.
    const plus = await post('/webhooks/microsoft-todo?validationToken=a+b%2Bc', undefined, {});
    expect(plus.body).toBe('a b+c');
    for (const id of Object.values(connections)) expect(await pullOf(id)).toBeUndefined();
  });

  it('a change made in Outlook or To Do reaches its route and queues a pull of its connection (202)', async () => {
    const upn = ana.userPrincipalName;
    await microsoft.control('POST', `/_emulator/microsoft/users/${upn}/ui/calendar/events`, {
      subject: 'Quarterly review',
      start: { dateTime: '2030-03-04T09:00:00', timeZone: 'UTC' },
      end: { dateTime: '2030-03-04T10:00:00', timeZone: 'UTC' },
    });
    await microsoft.control('POST', `/_emulator/microsoft/users/${upn}/ui/mail/messages`, {
      from: 'bea@fabrikam.example',
      to: upn,
      subject: 'Proposal',
      body: 'See attached.',
    });
    await microsoft.control('POST', `/_emulator/microsoft/users/${upn}/ui/todo/tasks`, {
      title: 'Call Bea back',
    });

    for (const [product, area] of [
      ['microsoft-calendar', 'Outlook Calendar'],
      ['microsoft-mail', 'Outlook Mail'],
      ['microsoft-todo', 'Microsoft To Do'],
    ] as const) {
      const job = await until(`a pull of ${product}`, () => pullOf(connections[product]));
      expect(job.data).toEqual({
        connectionId: connections[product],
        // The wording of the reason is the connector's; it names the product.
        reason: expect.stringContaining(area),
      });
    }
    const { deliveries } = await microsoft.control<{ deliveries: { url: string; outcome: unknown }[] }>(
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(new Set(deliveries.map((d) => d.outcome))).toEqual(new Set([202]));
    expect(deliveries.map((d) => d.url).sort()).toEqual(
      Object.keys(subscriptions)
        .map((product) => `${apiUrl}/webhooks/${product}`)
        .sort(),
    );
  });

  it('a verified notification answers 202 with the connections pulled; one POST may name several subscriptions', async () => {
    const calendar = subscriptions['microsoft-calendar'];
    const res = await notify(
      'microsoft-calendar',
      notification(calendar),
      notification(calendar, { changeType: 'deleted' }),
    );
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ outcome: 'pull_enqueued', connections: 1, changes: 0, newChanges: 0 });
    expect((await pullOf(calendar.connectionId))?.data).toEqual({
      connectionId: calendar.connectionId,
      reason: expect.stringContaining('Outlook Calendar'),
    });
  });

  it('a wrong clientState, an unknown subscription or another product’s subscription is 401, and pulls nothing', async () => {
    const calendar = subscriptions['microsoft-calendar'];
    const cases: [Product, object[]][] = [
      ['microsoft-calendar', [notification({ ...calendar, clientState: 'guess' })]],
      ['microsoft-calendar', [notification({ id: 'c3f8b7d2-unknown', clientState: calendar.clientState })]],
      ['microsoft-calendar', [notification(calendar, { clientState: undefined })]],
      ['microsoft-calendar', [notification(calendar, { clientState: '' })]],
      // One good item does not carry a bad one.
      ['microsoft-calendar', [notification(calendar), notification({ ...calendar, clientState: 'guess' })]],
      // The mail route takes only mail subscriptions, whatever their clientState.
      ['microsoft-mail', [notification(calendar)]],
    ];
    for (const [product, items] of cases) {
      const res = await notify(product, ...items);
      expect(res.statusCode, JSON.stringify(items)).toBe(401);
      expect(res.json()).toEqual({ error: { code: 'invalid_signature', message: expect.any(String) } });
    }
    for (const id of Object.values(connections)) expect(await pullOf(id)).toBeUndefined();
  });

  it('malformed bodies are 400 invalid_payload, never 5xx', async () => {
    const deep = `{"value":[${'['.repeat(40)}${']'.repeat(40)}]}`;
    for (const [body, headers] of [
      ['', { 'content-type': 'application/json' }],
      ['{"value": ', { 'content-type': 'application/json' }],
      ['[]', { 'content-type': 'application/json' }],
      ['{}', { 'content-type': 'application/json' }],
      ['{"value": []}', { 'content-type': 'application/json' }],
      ['{"value": [{}]}', { 'content-type': 'application/json' }],
      ['{"value": [{"subscriptionId": 7}]}', { 'content-type': 'application/json' }],
      [deep, { 'content-type': 'application/json' }],
      ['not json at all', { 'content-type': 'text/plain' }],
      [undefined, {}],
    ] as const) {
      const res = await post('/webhooks/microsoft-todo', body, { ...headers });
      expect(res.statusCode, String(body)).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_payload');
    }
  });

  it('a lifecycle notification makes its subscription due for renewal now, and still queues a pull', async () => {
    const mail = subscriptions['microsoft-mail'];
    const before = await expiryOf(mail.id);
    expect(before).toBeGreaterThan(Date.now() + 86_400_000);
    await microsoft.control('POST', `/_emulator/microsoft/subscriptions/${mail.id}/lifecycle`, {
      event: 'reauthorizationRequired',
    });
    const job = await until('a pull after reauthorizationRequired', () => pullOf(mail.connectionId));
    expect(job.data).toEqual({
      connectionId: mail.connectionId,
      reason: expect.stringMatching(/^Outlook Mail.*reauthorizationRequired/),
    });
    // Due now: the workers' renewal replaces every subscription that expires within the hour.
    expect(await expiryOf(mail.id)).toBeLessThanOrEqual(Date.now());

    // `missed` asks for a pull only; the calendar's subscription keeps its expiry.
    const calendar = subscriptions['microsoft-calendar'];
    const calendarExpiry = await expiryOf(calendar.id);
    await microsoft.control('POST', `/_emulator/microsoft/subscriptions/${calendar.id}/lifecycle`, {
      event: 'missed',
    });
    expect((await until('a pull after missed', () => pullOf(calendar.connectionId))).data).toMatchObject({
      reason: expect.stringMatching(/^Outlook Calendar.*missed/),
    });
    expect(await expiryOf(calendar.id)).toBe(calendarExpiry);

    // Graph removed the To Do subscription: made due, to be made again.
    const todo = subscriptions['microsoft-todo'];
    await microsoft.control('POST', `/_emulator/microsoft/subscriptions/${todo.id}/lifecycle`, {
      event: 'subscriptionRemoved',
    });
    await until('the To Do subscription made due', async () => (await expiryOf(todo.id)) <= Date.now());
    expect(await until('a pull after subscriptionRemoved', () => pullOf(todo.connectionId))).toBeDefined();
  });

  it('a paused connection is not pulled, and the notification still answered 202', async () => {
    const calendar = subscriptions['microsoft-calendar'];
    const paused = await t.app.inject({
      method: 'POST',
      url: `/api/v1/connections/${calendar.connectionId}/pause`,
      headers: bearer(a.adminKey),
    });
    expect(paused.statusCode, paused.body).toBe(200);
    await t.pullQueue.obliterate({ force: true });
    try {
      const res = await notify('microsoft-calendar', notification(calendar));
      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({ outcome: 'ignored', connections: 0 });
      expect(await pullOf(calendar.connectionId)).toBeUndefined();
    } finally {
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/connections/${calendar.connectionId}/resume`,
        headers: bearer(a.adminKey),
      });
    }
  });

  it('counts handshakes and notifications by product and outcome', async () => {
    const body = await (await scrapeMetrics(t)).text();
    expect(body).toMatch(/syncline_webhooks_total\{provider="microsoft-mail",outcome="validated"\} \d+/);
    expect(body).toContain(
      'syncline_webhooks_total{provider="microsoft-calendar",outcome="invalid_signature"} 5',
    );
    expect(body).toContain('syncline_webhooks_total{provider="microsoft-todo",outcome="invalid_payload"} 10');
    expect(body).toMatch(
      /syncline_webhooks_total\{provider="microsoft-calendar",outcome="pull_enqueued"\} \d+/,
    );
  });

  it('never echoes or logs a clientState', () => {
    const everything = [...bodies, ...t.logs].join('\n');
    for (const { clientState } of Object.values(subscriptions)) expect(everything).not.toContain(clientState);
  });
});
