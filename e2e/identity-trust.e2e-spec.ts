import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { type SyncSystem, startSystem, waitFor } from './support/system';

// Two different people who look alike are never one record, end to end: Maria and Mario Garcia
// at one company (one letter apart, one family phone), both in two CRMs; Jon Smith only in CRM A
// and Joan Smith only in CRM B. Connected in either CRM's order, each stays a person of their own
// with one record in each CRM, nobody's title reaches the other, no create is refused into a dead
// letter, and a third CRM connected later gets every one of them once. Every assertion reads the
// API or the emulators' state.

const PORTALS = { a: 3301, b: 3302, c: 3303 } as const;
const FAMILY_PHONE = '+1 415 555 0100';

const people = {
  maria: {
    email: 'maria.garcia@acmewidgets.example',
    firstname: 'Maria',
    lastname: 'Garcia',
    company: 'Acme Widgets',
    jobtitle: 'Head of Sales',
    phone: FAMILY_PHONE,
  },
  mario: {
    email: 'mario.garcia@acmewidgets.example',
    firstname: 'Mario',
    lastname: 'Garcia',
    company: 'Acme Widgets',
    jobtitle: 'Warehouse Lead',
    phone: FAMILY_PHONE,
  },
  jon: {
    email: 'jon.smith@acmewidgets.example',
    firstname: 'Jon',
    lastname: 'Smith',
    company: 'Acme Widgets',
  },
  joan: {
    email: 'joan.smith@acmewidgets.example',
    firstname: 'Joan',
    lastname: 'Smith',
    company: 'Acme Widgets',
  },
} as const;

interface RecordBody {
  id: string;
  fields: Record<string, unknown>;
  sourceLinks: { connectionId: string; externalId: string; linkedBecause: { rule: string } | null }[];
}

describe('identity trust: look-alikes across CRMs stay different people', () => {
  let s: SyncSystem;
  const connections: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  const grants: Record<string, { accessToken: string; refreshToken: string }> = {};

  const contacts = (portal: number) => s.emulator.hubspot.objects(portal, 'contacts');
  const byEmail = (list: HubspotRecord[], email: string) =>
    list.filter((c) => (c.properties.email ?? '').toLowerCase() === email);
  const settled = () =>
    waitFor(
      async () =>
        (
          await s.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM outbox WHERE status IN ('pending', 'sending')`,
          )
        )[0]?.n,
      { until: (n) => n === 0, timeoutMs: 90_000, describe: 'nothing left to write' },
    );
  const person = async (email: string) => {
    const res = await s.api<{ data: RecordBody[] }>(
      'GET',
      `/api/v1/people?email=${encodeURIComponent(email)}`,
    );
    return res.body.data;
  };

  const dumpState = async () => {
    s.dumpLogs('identity trust');
    console.log(
      await s.query(
        'SELECT connection_id, external_id, entity_id, link_reason FROM source_link ORDER BY created_at',
      ),
      await s.query('SELECT error_code, error_message FROM dead_letter'),
      await s.query('SELECT entity_a, entity_b, score, evidence, status FROM possible_duplicate'),
    );
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'identity_trust', workers: 1 });
    for (const [name, portalId] of Object.entries(PORTALS))
      grants[name] = await s.emulator.hubspot.createPortal({ portalId });
    // B's records first (B is connected first), so a name could only ever meet a record of the
    // other CRM: the order the reported merges happened in.
    await s.emulator.hubspot.createContact(PORTALS.b, people.mario);
    await s.emulator.hubspot.createContact(PORTALS.b, {
      ...people.maria,
      email: 'Maria.Garcia@AcmeWidgets.example',
    });
    await s.emulator.hubspot.createContact(PORTALS.b, people.joan);
    await s.emulator.hubspot.createContact(PORTALS.a, people.maria);
    await s.emulator.hubspot.createContact(PORTALS.a, people.mario);
    await s.emulator.hubspot.createContact(PORTALS.a, people.jon);
    connections.b = (
      await s.connect('hubspot', String(PORTALS.b), grantCredentials(grants.b!), { displayName: 'CRM B' })
    ).id;
    connections.a = (
      await s.connect('hubspot', String(PORTALS.a), grantCredentials(grants.a!), { displayName: 'CRM A' })
    ).id;
    await s.emulator.hubspot.setWebhookTarget(PORTALS.a);
    await s.emulator.hubspot.setWebhookTarget(PORTALS.b);
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('four people, each one record with one contact in each CRM, and Maria and Mario up for review', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    await waitFor(
      async () => ({ a: (await contacts(PORTALS.a)).length, b: (await contacts(PORTALS.b)).length }),
      {
        until: (n) => n.a === 4 && n.b === 4,
        timeoutMs: 90_000,
        describe: 'each CRM holds all four people',
      },
    );
    await settled();
    const records = new Map<string, RecordBody>();
    for (const [name, p] of Object.entries(people)) {
      const found = await person(p.email);
      expect(found, name).toHaveLength(1);
      records.set(name, found[0]!);
      const links = found[0]!.sourceLinks;
      expect(links.map((l) => l.connectionId).sort(), name).toEqual([connections.a, connections.b].sort());
      expect(found[0]!.fields, name).toMatchObject({ firstName: p.firstname, lastName: p.lastname });
    }
    expect(new Set([...records.values()].map((r) => r.id)).size).toBe(4);
    // Maria's title is Maria's in both CRMs, Mario's Mario's.
    for (const portal of [PORTALS.a, PORTALS.b]) {
      const list = await contacts(portal);
      expect(byEmail(list, people.maria.email).map((c) => c.properties.jobtitle)).toEqual([
        people.maria.jobtitle,
      ]);
      expect(byEmail(list, people.mario.email).map((c) => c.properties.jobtitle)).toEqual([
        people.mario.jobtitle,
      ]);
    }
    expect(await s.query('SELECT error_code, error_message FROM dead_letter')).toEqual([]);
    // The look-alikes wait for a person, never merged silently.
    const review = await s.api<{ data: { a: { id: string }; b: { id: string } }[] }>(
      'GET',
      '/api/v1/possible-duplicates?entityType=person&status=open',
    );
    const pairs = review.body.data.map((d) => [d.a.id, d.b.id].sort().join(' '));
    expect(pairs).toContain([records.get('maria')!.id, records.get('mario')!.id].sort().join(' '));
    // Nothing is suspect of holding two people.
    const check = await s.api<{ total: number }>('GET', '/api/v1/identity-check?entityType=person');
    expect(check.body.total).toBe(0);
  });

  it('a CRM connected later gets every one of them once', async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    connections.c = (
      await s.connect('hubspot', String(PORTALS.c), grantCredentials(grants.c!), { displayName: 'CRM C' })
    ).id;
    await waitFor(async () => (await contacts(PORTALS.c)).length, {
      until: (n) => n === 4,
      timeoutMs: 90_000,
      describe: 'CRM C holds all four people',
    });
    await settled();
    const list = await contacts(PORTALS.c);
    for (const p of Object.values(people)) expect(byEmail(list, p.email), p.email).toHaveLength(1);
    expect(await s.query('SELECT error_code, error_message FROM dead_letter')).toEqual([]);
  });
});
