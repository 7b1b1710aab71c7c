import { createHmac } from 'node:crypto';
import { Signature } from '@hubspot/api-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, HubspotHarness } from './testing/hubspot-harness';
import { type Responder, WebhookReceiver } from './testing/webhook-receiver';
import type { DeliveryRecord } from './webhook-dispatcher';

const header = (value: string | string[] | undefined): string =>
  Array.isArray(value) ? (value[0] ?? '') : (value ?? '');

describe('HubSpot emulator: webhooks to a real HTTP receiver', () => {
  let harness: HubspotHarness;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await harness.close();
  });

  async function receiver(respond?: Responder): Promise<WebhookReceiver> {
    const r = await WebhookReceiver.start(respond);
    receivers.push(r);
    return r;
  }

  it('posts signed events: v3 verifies with the documented algorithm and the SDK agrees on v1 and v3', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({ webhookUrl: hook.url, appId: 5001 });
    const created = await portal.client.crm.contacts.basicApi.create({
      properties: { email: 'signed@example.com', firstname: 'Signed' },
      associations: [],
    });
    await eventually(() => hook.events.length >= 3, 'creation and two property changes');

    for (const request of hook.received) {
      const timestamp = Number(header(request.headers['x-hubspot-request-timestamp']));
      const v3 = header(request.headers['x-hubspot-signature-v3']);
      const expected = createHmac('sha256', portal.clientSecret)
        .update(`POST${request.url}${request.body}${timestamp}`)
        .digest('base64');
      expect(v3).toBe(expected);
      expect(Math.abs(Date.now() - timestamp)).toBeLessThan(5 * 60_000);
      const common = { clientSecret: portal.clientSecret, requestBody: request.body };
      expect(
        Signature.isValid({
          ...common,
          signatureVersion: 'v3',
          signature: v3,
          url: request.url,
          method: 'POST',
          timestamp,
        }),
      ).toBe(true);
      expect(header(request.headers['x-hubspot-signature-version'])).toBe('v1');
      expect(
        Signature.isValid({
          ...common,
          signatureVersion: 'v1',
          signature: header(request.headers['x-hubspot-signature']),
        }),
      ).toBe(true);
      expect(request.headers['content-type']).toBe('application/json');
    }

    const creation = hook.events.find((e) => e.subscriptionType === 'contact.creation');
    expect(creation).toEqual({
      eventId: expect.any(Number),
      subscriptionId: expect.any(Number),
      portalId: portal.portalId,
      appId: 5001,
      occurredAt: expect.any(Number),
      subscriptionType: 'contact.creation',
      attemptNumber: 0,
      objectId: Number(created.id),
      changeFlag: 'CREATED',
      changeSource: 'INTEGRATION',
      sourceId: '5001',
    });
    const changes = hook.events
      .filter((e) => e.subscriptionType === 'contact.propertyChange')
      .map((e) => [e.propertyName, e.propertyValue, e.changeSource, e.sourceId]);
    expect(changes.sort()).toEqual([
      ['email', 'signed@example.com', 'INTEGRATION', '5001'],
      ['firstname', 'Signed', 'INTEGRATION', '5001'],
    ]);
  });

  it('reports writes made as a user in the CRM UI as CRM_UI with sourceId userId:<id>', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({ webhookUrl: hook.url });
    const ui = await harness.control<{ id: string }>(
      'POST',
      `/_emulator/hubspot/portals/${portal.portalId}/ui/companies`,
      {
        properties: { name: 'Typed in the UI' },
        userId: 4242,
      },
    );
    expect(ui.status).toBe(201);
    await eventually(() => hook.events.length >= 2, 'UI events');
    for (const e of hook.events)
      expect(e).toMatchObject({
        changeSource: 'CRM_UI',
        sourceId: 'userId:4242',
        objectId: Number(ui.body.id),
      });
    expect(hook.events.map((e) => e.subscriptionType).sort()).toEqual([
      'company.creation',
      'company.propertyChange',
    ]);
  });

  it('sends at most 100 events per request, shuffled, each event once', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({ webhookUrl: hook.url });
    await portal.client.crm.contacts.batchApi.create({
      inputs: Array.from({ length: 100 }, (_, i) => ({
        properties: { email: `bulk${i}@example.com`, firstname: `Bulk ${i}` },
        associations: [],
      })),
    });
    await eventually(() => hook.events.length >= 300, '300 events');
    expect(hook.received.every((r) => r.events.length <= 100)).toBe(true);
    expect(hook.received.length).toBeGreaterThanOrEqual(3);
    const ids = hook.events.map((e) => e.eventId);
    expect(new Set(ids).size).toBe(300);
    const inOrder = (r: { events: { eventId: number }[] }) =>
      r.events.every((e, i, all) => i === 0 || (all[i - 1]?.eventId ?? 0) < e.eventId);
    expect(hook.received.some((r) => !inOrder(r))).toBe(true);
  });

  it('retries a failed delivery with the same events and attemptNumber 1', async () => {
    const hook = await receiver((_req, n) => ({ status: n === 0 ? 500 : 200 }));
    const portal = await harness.createPortal({ webhookUrl: hook.url });
    await portal.client.crm.deals.basicApi.create({ properties: { dealname: 'Retry me' }, associations: [] });
    await eventually(() => hook.received.length >= 2, 'the retry');
    const [first, second] = hook.received;
    expect(first?.events.every((e) => e.attemptNumber === 0)).toBe(true);
    expect(second?.events.every((e) => e.attemptNumber === 1)).toBe(true);
    const ids = (r: typeof first) => (r?.events ?? []).map((e) => e.eventId).sort();
    expect(ids(second)).toEqual(ids(first));
  });

  it('holds events while webhooks are held and sends them all when released, stamping when each POST left', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({ webhookUrl: hook.url, webhookTiming: { held: true } });
    const path = `/_emulator/hubspot/portals/${portal.portalId}`;
    for (const name of ['Held 1', 'Held 2', 'Held 3'])
      await portal.client.crm.companies.basicApi.create({ properties: { name }, associations: [] });
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.received).toEqual([]);

    const released = Date.now();
    expect((await harness.control('PATCH', path, { webhookTiming: { held: false } })).status).toBe(200);
    await eventually(
      () => hook.events.filter((e) => e.subscriptionType === 'company.creation').length === 3,
      'the three creations, once released',
    );
    const log = await harness.control<{ deliveries: DeliveryRecord[] }>('GET', `${path}/webhooks`);
    const sent = log.body.deliveries.map((d) => Date.parse(d.sentAt ?? ''));
    for (const at of sent) expect(at).toBeGreaterThanOrEqual(released - 5);
    expect(log.body.deliveries.every((d) => Date.parse(d.at) >= Date.parse(d.sentAt ?? ''))).toBe(true);
  });

  it('treats an answer slower than the timeout as a failure, and retries', async () => {
    const hook = await receiver((_req, n) => ({ status: 204, delayMs: n === 0 ? 600 : 0 }));
    const portal = await harness.createPortal({ webhookUrl: hook.url, webhookTiming: { timeoutMs: 200 } });
    await portal.client.crm.companies.basicApi.create({ properties: { name: 'Slow' }, associations: [] });
    await eventually(() => hook.received.length >= 2, 'the retry after a timeout');
    expect(hook.received[1]?.events[0]?.attemptNumber).toBe(1);
    const log = await harness.control<{ deliveries: DeliveryRecord[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portal.portalId}/webhooks`,
    );
    expect(log.body.deliveries[0]).toMatchObject({
      outcome: 'failed',
      attemptNumber: 0,
      error: expect.stringContaining('200 ms'),
    });
  });

  it('retries with backoff when the receiver cannot be reached', async () => {
    const gone = await receiver();
    const url = gone.url;
    await gone.close();
    const portal = await harness.createPortal({
      webhookUrl: url,
      webhookTiming: { retryBaseMs: 20, maxRetries: 2 },
    });
    await portal.client.crm.contacts.basicApi.create({
      properties: { firstname: 'Nobody listens' },
      associations: [],
    });
    const path = `/_emulator/hubspot/portals/${portal.portalId}/webhooks`;
    const deliveries = await eventually<DeliveryRecord[]>(async () => {
      const { body } = await harness.control<{ deliveries: DeliveryRecord[] }>('GET', path);
      return body.deliveries.length >= 3 ? body.deliveries : undefined;
    }, 'three failed attempts');
    expect(deliveries.map((d) => [d.outcome, d.attemptNumber])).toEqual([
      ['failed', 0],
      ['failed', 1],
      ['failed', 2],
    ]);
  });

  it('duplicates a batch under a duplicate-webhooks fault, and drops one under drop-webhooks', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({ webhookUrl: hook.url });
    await harness.addFault({
      service: 'hubspot',
      kind: 'duplicate-webhooks',
      account: portal.portalId,
      count: 1,
    });
    await portal.client.crm.contacts.basicApi.create({
      properties: { firstname: 'Twice' },
      associations: [],
    });
    await eventually(() => hook.received.length >= 2, 'the duplicate');
    const ids = hook.events.map((e) => e.eventId);
    expect(ids.length).toBe(4);
    expect(new Set(ids).size).toBe(2);

    await harness.addFault({ service: 'hubspot', kind: 'drop-webhooks', account: portal.portalId, count: 1 });
    await portal.client.crm.contacts.basicApi.create({
      properties: { firstname: 'Dropped' },
      associations: [],
    });
    await new Promise((r) => setTimeout(r, 200));
    await portal.client.crm.contacts.basicApi.create({ properties: { firstname: 'Kept' }, associations: [] });
    await eventually(() => hook.events.some((e) => e.propertyValue === 'Kept'), 'the next batch');
    expect(hook.events.some((e) => e.propertyValue === 'Dropped')).toBe(false);
  });

  it('sends deletion, merge and associationChange events with their fields', async () => {
    const hook = await receiver();
    const portal = await harness.createPortal({
      webhookUrl: hook.url,
      subscriptions: [
        { subscriptionType: 'contact.deletion' },
        { subscriptionType: 'contact.merge' },
        { subscriptionType: 'contact.associationChange' },
        { subscriptionType: 'company.associationChange' },
      ],
    });
    const contacts = portal.client.crm.contacts.basicApi;
    const a = await contacts.create({ properties: { email: 'a@merge.test' }, associations: [] });
    const b = await contacts.create({ properties: { email: 'b@merge.test' }, associations: [] });
    const c = await contacts.create({ properties: { email: 'c@merge.test' }, associations: [] });
    const company = await portal.client.crm.companies.basicApi.create({
      properties: { name: 'Co' },
      associations: [],
    });
    await contacts.merge({ primaryObjectId: a.id, objectIdToMerge: b.id });
    await contacts.archive(c.id);
    await portal.client.crm.associations.v4.basicApi.createDefault('contacts', a.id, 'companies', company.id);
    await eventually(() => hook.events.length >= 4, 'four events');

    const byType = (t: string) => hook.events.filter((e) => e.subscriptionType === t);
    expect(byType('contact.merge')[0]).toMatchObject({
      objectId: Number(a.id),
      primaryObjectId: Number(a.id),
      mergedObjectIds: [Number(b.id)],
      newObjectId: Number(a.id),
      numberOfPropertiesMoved: expect.any(Number),
      changeSource: 'INTEGRATION',
    });
    expect(byType('contact.deletion')[0]).toMatchObject({ objectId: Number(c.id), changeFlag: 'DELETED' });
    expect(byType('contact.associationChange')[0]).toMatchObject({
      associationType: 'CONTACT_TO_COMPANY',
      fromObjectId: Number(a.id),
      toObjectId: Number(company.id),
      associationRemoved: false,
      isPrimaryAssociation: false,
    });
    expect(byType('company.associationChange')[0]).toMatchObject({ associationType: 'COMPANY_TO_CONTACT' });
    // Only what the portal subscribed to: no creations, no property changes.
    expect(hook.events).toHaveLength(4);
  });
});
