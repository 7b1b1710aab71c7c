import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactPropertyChange, hubspotSignedHeaders } from '../testing/hubspot-webhooks';
import { seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const PUBLIC_BASE_URL = 'https://sync.example.test';
const HUBSPOT_SECRET = `hs-${randomBytes(8).toString('hex')}`;
const PORTAL = 4711;

const signed = (body: string) =>
  hubspotSignedHeaders(body, { secret: HUBSPOT_SECRET, url: `${PUBLIC_BASE_URL}/webhooks/hubspot` });

const change = (objectId: number | string, propertyValue: string, sourceId = 'userId:1') =>
  contactPropertyChange({ portalId: PORTAL, objectId, propertyName: 'firstname', propertyValue, sourceId });

/** A good contact of each case's batch, one of its own. */
let goodId = 600;

interface Letter {
  source: string;
  event_key: string;
  payload: { externalId: string; eventKey: string; fields: Record<string, string>; origin?: object };
  error_message: string;
}

/**
 * A correctly signed HubSpot event that PostgreSQL cannot hold as it is (a NUL, half of a
 * UTF-16 surrogate pair) is a poison event: it is kept as a dead letter, readable, and the
 * delivery is acknowledged, so HubSpot neither retries it for a day nor loses its neighbours.
 */
describe('poison HubSpot events', () => {
  let t: TestApp;
  let connectionId: string;

  const deliver = (body: string) =>
    t.app.inject({ method: 'POST', url: '/webhooks/hubspot', headers: signed(body), payload: body });
  const letters = () =>
    t.prisma.$queryRaw<Letter[]>`
      SELECT source, event_key, payload, error_message FROM dead_letter ORDER BY created_at, event_key`;
  const events = () => t.prisma.changeEvent.findMany({ orderBy: { eventKey: 'asc' } });

  beforeAll(async () => {
    t = await startTestApp('webhook_poison', { PUBLIC_BASE_URL, HUBSPOT_CLIENT_SECRET: HUBSPOT_SECRET });
    const { workspaceId } = await seedWorkspace(t.prisma, 'Acme');
    connectionId = randomUUID();
    await t.prisma.$executeRaw`
      INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
      VALUES (${connectionId}::uuid, ${workspaceId}::uuid, 'hubspot', ${String(PORTAL)}, 'live')`;
    // Proven to be the portal's: only then does a connection take webhooks in.
    await t.prisma
      .$executeRaw`UPDATE connection SET credentials_verified_at = now() WHERE id = ${connectionId}::uuid`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['a NUL in a value', change(501, 'Ada\u0000Lovelace'), { fields: { firstName: 'Ada\\u0000Lovelace' } }],
    ['half a surrogate pair in a value', change(502, 'Ada \ud83d'), { fields: { firstName: 'Ada \\ud83d' } }],
    ['a NUL in the record id', change('50\u00003', 'Ada'), { externalId: '50\\u00003' }],
    [
      'a lone low surrogate in the origin',
      change(504, 'Ada', 'userId:\udc00'),
      { origin: expect.objectContaining({ sourceId: 'userId:\\udc00' }) },
    ],
  ])(
    '%s: acknowledged, the good events appended, the poison one kept readable',
    async (_label, poison, kept) => {
      const good = change(++goodId, 'Grace');
      const before = { letters: (await letters()).length, events: (await events()).length };
      const body = JSON.stringify([good, poison]);

      const res = await deliver(body);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ outcome: 'appended', connections: 1, changes: 2, newChanges: 1 });
      const appended = await events();
      expect(appended).toHaveLength(before.events + 1);
      expect(appended.some((e) => e.externalId === String(good.objectId))).toBe(true);

      const stored = await letters();
      expect(stored).toHaveLength(before.letters + 1);
      const letter = stored.at(-1)!;
      expect(letter.source).toBe('webhook:hubspot');
      expect(letter.error_message).toMatch(/NUL|surrogate/);
      expect(letter.payload).toMatchObject(kept);
      expect(letter.event_key).toBe(letter.payload.eventKey);

      // HubSpot delivers it again: acknowledged again, kept once.
      const again = await deliver(body);
      expect(again.statusCode, again.body).toBe(200);
      expect(await letters()).toHaveLength(before.letters + 1);
    },
  );

  it('a signed body nested absurdly deep is 400 invalid_payload, and nothing is written', async () => {
    const before = { letters: (await letters()).length, events: (await events()).length };
    for (const body of [
      `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
      JSON.stringify([
        { ...change(701, 'Ada'), extra: JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`) },
      ]),
    ]) {
      const res = await deliver(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: { code: 'invalid_payload', message: expect.stringMatching(/nested deeper than \d+/) },
      });
    }
    // Depth a real event has, and brackets inside strings, are no nesting.
    const ordinary = JSON.stringify([{ ...change(702, '[[[[{{{{'), extra: { a: { b: [1, [2]] } } }]);
    expect((await deliver(ordinary)).statusCode).toBe(200);
    expect(await letters()).toHaveLength(before.letters);
    expect(await events()).toHaveLength(before.events + 1);
  });
});
