import { describe, expect, it } from 'vitest';
import type { WebhookRequest } from '../contract/connector';
import { hubspotConnector } from './hubspot.connector';
import { signV3 } from './hubspot-webhook';

const secret = 'client-secret';
const url = 'https://sync.example.com/webhooks/hubspot';
const now = new Date('2026-11-29T22:00:00.000Z');
const ctx = {
  connectionId: '0190f3a2-0000-7000-8000-00000000000c',
  workspaceId: '0190f3a2-0000-7000-8000-00000000000w'.replace('w', 'a'),
  appId: '5001',
};

// Recorded shapes of one emulator batch.
const events = [
  {
    eventId: 101,
    subscriptionId: 9,
    portalId: 77,
    appId: 5001,
    occurredAt: now.getTime() - 1_000,
    subscriptionType: 'contact.propertyChange',
    attemptNumber: 0,
    objectId: 151,
    changeSource: 'CRM_UI',
    sourceId: 'userId:7',
    propertyName: 'firstname',
    propertyValue: 'Ada',
  },
  {
    eventId: 102,
    subscriptionId: 10,
    portalId: 77,
    appId: 5001,
    occurredAt: now.getTime() - 900,
    subscriptionType: 'deal.deletion',
    attemptNumber: 0,
    objectId: 33,
    changeFlag: 'DELETED',
    changeSource: 'INTEGRATION',
    sourceId: '5001',
  },
  {
    eventId: 103,
    subscriptionId: 11,
    portalId: 77,
    appId: 5001,
    occurredAt: now.getTime() - 800,
    subscriptionType: 'contact.merge',
    attemptNumber: 0,
    objectId: 151,
    primaryObjectId: 151,
    mergedObjectIds: [152],
    newObjectId: 151,
    numberOfPropertiesMoved: 2,
    changeSource: 'CRM_UI',
    sourceId: 'userId:7',
  },
  {
    eventId: 104,
    subscriptionId: 12,
    portalId: 77,
    appId: 5001,
    occurredAt: now.getTime() - 700,
    subscriptionType: 'contact.associationChange',
    attemptNumber: 0,
    changeSource: 'CRM_UI',
    sourceId: 'userId:7',
    associationType: 'CONTACT_TO_COMPANY',
    fromObjectId: 151,
    toObjectId: 9,
  },
];

function signed(body: string, timestamp = now.getTime()): WebhookRequest {
  return {
    method: 'POST',
    url,
    rawBody: body,
    receivedAt: now,
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': signV3(secret, 'POST', url, body, String(timestamp)),
      'x-hubspot-request-timestamp': String(timestamp),
    },
  };
}

describe('HubSpot webhooks', () => {
  const body = JSON.stringify(events);

  it('accepts a good v3 signature and refuses bad, stale, tampered or unsigned requests', () => {
    expect(hubspotConnector.verifyWebhook(signed(body), { clientSecret: secret }).ok).toBe(true);
    const code = (r: WebhookRequest, s = secret) => {
      const v = hubspotConnector.verifyWebhook(r, { clientSecret: s });
      return v.ok ? 'ok' : v.error.code;
    };
    expect(code(signed(body), 'other-secret')).toBe('Validation');
    expect(code(signed(body, now.getTime() - 5 * 60_000 - 1))).toBe('Validation');
    expect(code({ ...signed(body), rawBody: body.replace('Ada', 'Eve') })).toBe('Validation');
    expect(code({ ...signed(body), url: 'https://evil.example.com/webhooks/hubspot' })).toBe('Validation');
    expect(code({ ...signed(body), headers: {} })).toBe('Validation');
  });

  it('parses property changes, deletions, merges and association notices; skips what it does not model', () => {
    const outcome = hubspotConnector.parseWebhook(signed(body), ctx);
    if (!outcome.ok || outcome.value.kind !== 'changes') throw new Error('expected changes');
    const [change, deletion, merge, association] = outcome.value.changes;
    expect(outcome.value.changes).toHaveLength(4);
    // An association change is a fieldless notice of the contact that carries the pair.
    expect(association).toMatchObject({
      entityType: 'person',
      externalId: '151',
      op: 'upsert',
      fields: {},
      eventKey: `contacts:151:association:${now.getTime() - 700}:9:added`,
      origin: { associationChange: true, partial: true, changeSource: 'CRM_UI' },
    });
    expect(change).toMatchObject({
      entityType: 'person',
      externalId: '151',
      op: 'upsert',
      fields: { firstName: 'Ada' },
      fieldTimes: { firstName: new Date(now.getTime() - 1_000) },
      eventKey: `contacts:151:${now.getTime() - 1_000}:firstname`,
      origin: { changeSource: 'CRM_UI', sourceId: 'userId:7', ours: false },
    });
    expect(deletion).toMatchObject({
      entityType: 'deal',
      op: 'delete',
      eventKey: `deals:33:deleted:${now.getTime() - 900}`,
      origin: { ours: true },
    });
    // A merge is no delete of the merged-away record: it redirects it to the survivor.
    expect(merge).toMatchObject({
      entityType: 'person',
      op: 'merge',
      externalId: '152',
      fields: { mergedInto: '151' },
      eventKey: 'contacts:152:merged-into:151',
      origin: { partial: true, changeSource: 'CRM_UI' },
    });
    // occurredAt is not the record's version: a webhook change claims none (conditional
    // writes compare providerVersion with the record's updatedAt).
    expect(outcome.value.changes.map((c) => c.providerVersion)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('gives a redelivery (another attempt, another order) the same keys', () => {
    const first = hubspotConnector.parseWebhook(signed(body), ctx);
    const again = hubspotConnector.parseWebhook(
      signed(JSON.stringify([...events].reverse().map((e) => ({ ...e, attemptNumber: 3 })))),
      ctx,
    );
    const keys = (r: typeof first) =>
      r.ok && r.value.kind === 'changes' ? r.value.changes.map((c) => c.eventKey).sort() : [];
    expect(keys(again)).toEqual(keys(first));
    expect(keys(first)).toHaveLength(4);
  });

  it("drops a property change of Syncline's own insight properties, even where a mapping names one", () => {
    const insight = {
      ...events[0],
      eventId: 105,
      propertyName: 'syncline_last_contacted',
      propertyValue: '2026-11-28T09:00:00.000Z',
    };
    const batch = JSON.stringify([events[0], insight]);
    for (const fieldMappings of [undefined, { 'person.lastContacted': 'syncline_last_contacted' }]) {
      const outcome = hubspotConnector.parseWebhook(signed(batch), {
        ...ctx,
        ...(fieldMappings ? { fieldMappings } : {}),
      });
      if (!outcome.ok || outcome.value.kind !== 'changes') throw new Error('expected changes');
      // Only the firstname change of the batch: none for the insight property.
      expect(outcome.value.changes.map((c) => c.eventKey)).toEqual([
        `contacts:151:${now.getTime() - 1_000}:firstname`,
      ]);
      expect(outcome.value.changes[0]!.fields).toEqual({ firstName: 'Ada' });
    }
  });

  it('refuses a body that is not a JSON array', () => {
    const r = hubspotConnector.parseWebhook(signed('{"a":1}'), ctx);
    expect(r.ok ? 'ok' : r.error.code).toBe('Validation');
  });
});
