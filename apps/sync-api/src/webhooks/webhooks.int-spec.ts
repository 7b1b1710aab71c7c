import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contactPropertyChange, hubspotSignedHeaders } from '../testing/hubspot-webhooks';
import { freePort } from '../testing/processes';
import { ProviderAccounts } from '../testing/provider-accounts';
import { bearer, scrapeMetrics, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';
import { pushSubscriptionAad } from './webhooks.service';

const PUBLIC_BASE_URL = 'https://sync.example.test';
const HUBSPOT_SECRET = `hs-${randomBytes(8).toString('hex')}`;
const GMAIL_TOKEN = `gp-${randomBytes(8).toString('hex')}`;
const CHANNEL_TOKEN = `ct-${randomBytes(8).toString('hex')}`;

/** HubSpot v3 (testing/hubspot-webhooks), to our URL with our secret unless told. */
const hubspotHeaders = (body: string, options: { secret?: string; url?: string; at?: number } = {}) =>
  hubspotSignedHeaders(body, {
    secret: options.secret ?? HUBSPOT_SECRET,
    url: options.url ?? `${PUBLIC_BASE_URL}/webhooks/hubspot`,
    ...(options.at === undefined ? {} : { at: options.at }),
  });

const contactChange = (portalId: number, objectId: number, propertyName: string, propertyValue: string) =>
  contactPropertyChange({ portalId, objectId, propertyName, propertyValue });

describe('webhooks', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let hubspotA: string;
  let hubspotB: string;
  let calendarId: string;
  let gmailId: string;
  const bodies: string[] = [];

  let accounts: ProviderAccounts;
  /** Connects with credentials of the account from the emulators, which prove it. */
  const connect = async (key: string, provider: string, externalAccountId: string): Promise<string> => {
    const credentials =
      provider === 'hubspot'
        ? { privateAppToken: (await accounts.hubspot(Number(externalAccountId))).privateAppToken }
        : (await accounts.google(externalAccountId.toLowerCase())).oauth;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/connections',
      headers: bearer(key),
      payload: { provider, externalAccountId, credentials },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };
  const post = async (
    url: string,
    headers: Record<string, string>,
    payload?: string,
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
  const events = (connectionId: string) => t.prisma.changeEvent.count({ where: { connectionId } });

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('webhooks', {
      ...accounts.env,
      PUBLIC_BASE_URL,
      HUBSPOT_CLIENT_SECRET: HUBSPOT_SECRET,
      HUBSPOT_APP_ID: '999',
      GMAIL_PUSH_TOKEN: GMAIL_TOKEN,
      API_METRICS_PORT: String(await freePort()),
    });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    hubspotA = await connect(a.adminKey, 'hubspot', '4711');
    hubspotB = await connect(b.adminKey, 'hubspot', '5150');
    calendarId = await connect(a.adminKey, 'google-calendar', 'rep@acme.test');
    gmailId = await connect(a.adminKey, 'gmail', 'Rep@Acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await accounts?.close();
  });

  describe('HubSpot', () => {
    const batch = JSON.stringify([
      contactChange(4711, 101, 'email', 'ada@acme.test'),
      contactChange(4711, 101, 'firstname', 'Ada'),
      contactChange(5150, 202, 'lastname', 'Lovelace'),
      contactChange(9999, 303, 'email', 'nobody@nowhere.test'),
    ]);

    it('a bad signature is 401 invalid_signature and appends nothing', async () => {
      for (const headers of [
        hubspotHeaders(batch, { secret: 'not-the-secret' }),
        // Signed for another URL: the public URL is part of what HubSpot signs.
        hubspotHeaders(batch, { url: 'http://127.0.0.1:3000/webhooks/hubspot' }),
        // A replay from long ago.
        hubspotHeaders(batch, { at: Date.now() - 10 * 60_000 }),
        { 'content-type': 'application/json' },
      ]) {
        const res = await post('/webhooks/hubspot', headers, batch);
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: { code: 'invalid_signature', message: expect.any(String) } });
      }
      expect(await events(hubspotA)).toBe(0);
      expect(await events(hubspotB)).toBe(0);
    });

    it('a signed batch is on the log, split by portal, when the answer comes; unknown portals are ignored', async () => {
      const res = await post('/webhooks/hubspot', hubspotHeaders(batch), batch);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ outcome: 'appended', connections: 2, changes: 3, newChanges: 3 });

      const rows = await t.prisma.changeEvent.findMany({
        orderBy: [{ connectionId: 'asc' }, { eventKey: 'asc' }],
      });
      expect(rows).toHaveLength(3);
      const ofA = rows.filter((r) => r.connectionId === hubspotA);
      expect(ofA.map((r) => [r.workspaceId, r.entityType, r.externalId, r.op])).toEqual([
        [a.workspaceId, 'person', '101', 'upsert'],
        [a.workspaceId, 'person', '101', 'upsert'],
      ]);
      expect(ofA.map((r) => r.fields)).toEqual(expect.arrayContaining([{ email: 'ada@acme.test' }]));
      const ofB = rows.filter((r) => r.connectionId === hubspotB);
      expect(ofB.map((r) => [r.workspaceId, r.externalId])).toEqual([[b.workspaceId, '202']]);
    });

    it('the same batch delivered again (HubSpot retries) is stored once', async () => {
      for (let delivery = 0; delivery < 2; delivery++) {
        const res = await post('/webhooks/hubspot', hubspotHeaders(batch), batch);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ outcome: 'duplicate', changes: 3, newChanges: 0 });
      }
      expect(await events(hubspotA)).toBe(2);
      expect(await events(hubspotB)).toBe(1);
    });

    it('a batch only for unknown portals is acknowledged and ignored', async () => {
      const body = JSON.stringify([contactChange(424242, 1, 'email', 'x@y.test')]);
      const res = await post('/webhooks/hubspot', hubspotHeaders(body), body);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ outcome: 'ignored', connections: 0 });
    });

    it('a signed body that is not JSON, or not an array, is 400 invalid_payload, never 500', async () => {
      for (const body of ['[{"portalId": 4711,', '{"portalId": 4711}', '']) {
        const res = await post('/webhooks/hubspot', hubspotHeaders(body), body);
        expect(res.statusCode).toBe(400);
        expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_payload');
      }
      expect(await events(hubspotA)).toBe(2);
    });

    it('other routes still parse JSON themselves', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/connections',
        headers: { ...bearer(a.adminKey), 'content-type': 'application/json' },
        payload: '{"provider": ',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('bad_request');
    });
  });

  describe('Google Calendar', () => {
    const channelId = `chan-${randomBytes(6).toString('hex')}`;
    const notify = (overrides: Record<string, string> = {}) =>
      post('/webhooks/google-calendar', {
        'x-goog-channel-id': channelId,
        'x-goog-channel-token': CHANNEL_TOKEN,
        'x-goog-channel-expiration': new Date(Date.now() + 86_400_000).toUTCString(),
        'x-goog-resource-id': 'resource-1',
        'x-goog-resource-uri': 'https://www.googleapis.com/calendar/v3/calendars/primary/events',
        'x-goog-resource-state': 'exists',
        'x-goog-message-number': '7',
        ...overrides,
      });

    beforeAll(async () => {
      const sealed = t.keyring.seal(CHANNEL_TOKEN, pushSubscriptionAad(channelId));
      await t.prisma.pushSubscription.create({
        data: {
          id: channelId,
          connectionId: calendarId,
          workspaceId: a.workspaceId,
          resourceId: 'resource-1',
          tokenKeyId: sealed.keyId,
          tokenCiphertext: Uint8Array.from(sealed.ciphertext),
          expiresAt: new Date(Date.now() + 7 * 86_400_000),
        },
      });
    });
    beforeEach(async () => {
      // Creating the connection queued its first pull; start from an empty queue.
      await t.pullQueue.obliterate({ force: true });
    });

    it('a notification with the channel token queues a pull of the connection', async () => {
      const res = await notify();
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ outcome: 'pull_enqueued', connections: 1, changes: 0, newChanges: 0 });
      const job = await t.pullQueue.getJob(`pull.${calendarId}`);
      expect(job?.name).toBe('connection.pull');
      expect(job?.data).toEqual({ connectionId: calendarId, reason: 'calendar exists' });
      expect(job?.opts).toMatchObject({ attempts: 6, backoff: { type: 'exponential', delay: 2000 } });

      // A second notification while the pull waits joins it.
      expect((await notify({ 'x-goog-message-number': '9' })).statusCode).toBe(200);
      expect(await t.pullQueue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    });

    it('leaves a pull request for a running pull, and adds pull.<id>.next when pull.<id> has finished reading', async () => {
      const redis = new Redis(t.config.REDIS_URL);
      const requested = `${t.config.REDIS_PREFIX}:pull-requested:${calendarId}`;
      const closing = `${t.config.REDIS_PREFIX}:pull-closing:${calendarId}`;
      try {
        // The request a running pull takes once caught up (the add itself joins that job).
        expect((await notify()).statusCode).toBe(200);
        expect(Number(await redis.get(requested))).toBeGreaterThan(Date.now() - 60_000);
        expect(await redis.pttl(requested)).toBeGreaterThan(0);
        expect(await t.pullQueue.getJob(`pull.${calendarId}.next`)).toBeUndefined();

        // pull.<id> caught up without a request and is finishing (its id still held): the
        // notification must not join it, but queue the other id to run after it.
        await redis.set(closing, `pull.${calendarId}`, 'PX', 60_000);
        expect((await notify({ 'x-goog-message-number': '11' })).statusCode).toBe(200);
        const next = await t.pullQueue.getJob(`pull.${calendarId}.next`);
        expect(next?.data).toEqual({ connectionId: calendarId, reason: 'calendar exists' });
      } finally {
        await redis.del(requested, closing);
        redis.disconnect();
      }
    });

    it('a wrong token, an unknown channel or a foreign resource is 401 and queues nothing', async () => {
      const cases: Record<string, string>[] = [
        { 'x-goog-channel-token': 'guess' },
        { 'x-goog-channel-id': 'chan-unknown' },
        { 'x-goog-resource-id': 'resource-2' },
      ];
      for (const overrides of cases) {
        const res = await notify(overrides);
        expect(res.statusCode).toBe(401);
        expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_signature');
      }
      expect(await t.pullQueue.getJob(`pull.${calendarId}`)).toBeUndefined();
    });

    it('a notification without its channel headers is 400', async () => {
      const res = await post('/webhooks/google-calendar', {});
      expect(res.statusCode).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_payload');
      const noState = await notify({ 'x-goog-resource-state': '' });
      expect(noState.statusCode).toBe(400);
    });
  });

  describe('Gmail', () => {
    const push = (emailAddress: string, historyId: unknown = 12345) =>
      JSON.stringify({
        message: {
          data: Buffer.from(JSON.stringify({ emailAddress, historyId })).toString('base64url'),
          messageId: '1',
          publishTime: new Date().toISOString(),
        },
        subscription: 'projects/syncline/subscriptions/gmail-push',
      });
    const json = { 'content-type': 'application/json' };

    beforeEach(async () => {
      await t.pullQueue.obliterate({ force: true });
    });

    it('a push with the bearer token queues a pull of the mailbox (address case ignored)', async () => {
      const res = await post(
        '/webhooks/gmail',
        { ...json, authorization: `Bearer ${GMAIL_TOKEN}` },
        push('rep@acme.test'),
      );
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ outcome: 'pull_enqueued', connections: 1 });
      const job = await t.pullQueue.getJob(`pull.${gmailId}`);
      expect(job?.data).toEqual({ connectionId: gmailId, reason: 'gmail rep@acme.test at history 12345' });
    });

    it('the token may come in the push URL instead', async () => {
      const res = await post(`/webhooks/gmail?token=${GMAIL_TOKEN}`, json, push('rep@acme.test'));
      expect(res.statusCode).toBe(200);
      expect(await t.pullQueue.getJob(`pull.${gmailId}`)).toBeDefined();
    });

    it('a wrong or missing token is 401', async () => {
      for (const headers of [{ ...json, authorization: 'Bearer nope' }, json]) {
        const res = await post('/webhooks/gmail', headers, push('rep@acme.test'));
        expect(res.statusCode).toBe(401);
        expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_signature');
      }
      expect(await t.pullQueue.getJob(`pull.${gmailId}`)).toBeUndefined();
    });

    it('a push for a mailbox we do not sync is acknowledged and ignored', async () => {
      const res = await post(
        '/webhooks/gmail',
        { ...json, authorization: `Bearer ${GMAIL_TOKEN}` },
        push('x@y.test'),
      );
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ outcome: 'ignored' });
    });

    it('malformed pushes are 400 invalid_payload', async () => {
      const auth = { ...json, authorization: `Bearer ${GMAIL_TOKEN}` };
      for (const body of [
        '{"message": ',
        '{"message": {}}',
        JSON.stringify({ message: { data: 'bm90IGpzb24' } }),
      ]) {
        const res = await post('/webhooks/gmail', auth, body);
        expect(res.statusCode).toBe(400);
        expect(res.json<{ error: { code: string } }>().error.code).toBe('invalid_payload');
      }
    });
  });

  it('counts webhooks by provider and outcome', async () => {
    const body = await (await scrapeMetrics(t)).text();
    expect(body).toContain('syncline_webhooks_total{provider="hubspot",outcome="appended"} 1');
    expect(body).toContain('syncline_webhooks_total{provider="hubspot",outcome="duplicate"} 2');
    expect(body).toContain('syncline_webhooks_total{provider="hubspot",outcome="invalid_signature"} 4');
    expect(body).toContain('syncline_webhooks_total{provider="google-calendar",outcome="pull_enqueued"} 4');
    expect(body).toMatch(/syncline_webhooks_total\{provider="gmail",outcome="invalid_payload"\} 3/);
  });

  it('never echoes a secret', async () => {
    const everything = [...bodies, ...t.logs].join('\n');
    for (const secret of [HUBSPOT_SECRET, GMAIL_TOKEN, CHANNEL_TOKEN]) {
      const leak = everything.split('\n').find((line) => line.includes(secret));
      expect(leak).toBeUndefined();
    }
  });
});
