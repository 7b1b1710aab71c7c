import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { type SyncSystem, sleep, startSystem, waitFor } from './support/system';

// Two HubSpot portals (CRM A and CRM B) connected to one workspace, through the real API and
// workers processes, with the portals' webhooks pointed at the API. Every assertion reads the
// emulators' state or request logs.

const PORTAL_A = 3101;
const PORTAL_B = 3102;

describe('two-way sync between two CRMs', () => {
  let s: SyncSystem;
  const contacts = (portal: number) => s.emulator.hubspot.objects(portal, 'contacts');
  const byEmail = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await contacts(portal)).find((c) => c.properties.email === email);

  const dumpState = async () => {
    s.dumpLogs('two-way sync');
    console.log(
      await s.query(
        `SELECT provider, status, status_reason, backfill_seen, reconciled_at, last_error_code FROM connection`,
      ),
      await s.query(`SELECT id, connection_id, op, status, fields, last_error FROM outbox ORDER BY id`),
      await s.query(`SELECT entity_type, fields, version FROM entity`),
      await s.query(
        `SELECT connection_id, external_id, event_key, fields, event_time FROM change_event ORDER BY "offset"`,
      ),
      await s.query(`SELECT error_code, error_message FROM dead_letter`),
    );
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'two_way', workers: 1 });
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhooks: true });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    // The same person in both CRMs, written differently; and one person each CRM lacks.
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'ada.lovelace@analytical.example',
      firstname: 'Ada',
      lastname: 'Lovelace',
      phone: '+44 20 7946 0018',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'Ada.Lovelace@Analytical.example',
      firstname: 'Ada',
      lastname: 'Lovelace',
      jobtitle: 'Analyst',
    });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'grace@navy.example',
      firstname: 'Grace',
      lastname: 'Hopper',
    });
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b), { displayName: 'CRM B' });
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('links the same person in both CRMs and gives each CRM the union of fields and people', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    await waitFor(
      async () => {
        const inB = await byEmail(PORTAL_B, 'ada.lovelace@analytical.example');
        const inA = await byEmail(PORTAL_A, 'ada.lovelace@analytical.example');
        const grace = await byEmail(PORTAL_B, 'grace@navy.example');
        return (
          inA?.properties.jobtitle === 'Analyst' && inB?.properties.phone === '+44 20 7946 0018' && !!grace
        );
      },
      { timeoutMs: 60_000, describe: 'both CRMs hold Ada with phone and job title, and B holds Grace' },
    );
    // One person in each CRM: no duplicate contact was created for Ada.
    for (const portal of [PORTAL_A, PORTAL_B]) {
      const adas = (await contacts(portal)).filter(
        (c) => c.properties.email === 'ada.lovelace@analytical.example',
      );
      expect(adas).toHaveLength(1);
    }
    expect(
      (await contacts(PORTAL_B)).filter((c) => c.properties.email === 'grace@navy.example'),
    ).toHaveLength(1);
  });

  it('stage-like edits of different fields in A and B both arrive in both CRMs', async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    const adaA = (await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))!;
    const adaB = (await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))!;
    await Promise.all([
      s.emulator.hubspot.updateContact(PORTAL_A, adaA.id, { lifecyclestage: 'opportunity' }),
      s.emulator.hubspot.updateContact(PORTAL_B, adaB.id, { company: 'Analytical Engines Ltd' }),
    ]);
    await waitFor(
      async () => {
        const a = await byEmail(PORTAL_A, 'ada.lovelace@analytical.example');
        const b = await byEmail(PORTAL_B, 'ada.lovelace@analytical.example');
        return (
          a?.properties.company === 'Analytical Engines Ltd' &&
          b?.properties.lifecyclestage === 'opportunity' &&
          a.properties.lifecyclestage === 'opportunity' &&
          b.properties.company === 'Analytical Engines Ltd'
        );
      },
      { timeoutMs: 30_000, describe: 'each CRM has both edits' },
    );
  });

  it('the same field edited in both before either propagates: the later edit wins everywhere', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const adaA = (await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))!;
    const adaB = (await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))!;
    // Webhooks off for a moment so that neither edit can propagate before the other is made.
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A, null);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B, null);
    await s.emulator.hubspot.updateContact(PORTAL_A, adaA.id, { jobtitle: 'Mathematician' });
    // Later, but too soon for a pull, a merge and a write to reach B in between.
    await sleep(5);
    await s.emulator.hubspot.updateContact(PORTAL_B, adaB.id, { jobtitle: 'Countess' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    await waitFor(
      async () => {
        const a = await byEmail(PORTAL_A, 'ada.lovelace@analytical.example');
        const b = await byEmail(PORTAL_B, 'ada.lovelace@analytical.example');
        return { a: a?.properties.jobtitle, b: b?.properties.jobtitle };
      },
      {
        until: (v) => v.a === 'Countess' && v.b === 'Countess',
        timeoutMs: 20_000,
        describe: 'both CRMs show the later job title',
      },
    );
  });

  it('the conflict of the previous scenario is recorded with both values', async () => {
    const rows = await s.query<{ field: string; candidates: { value: unknown }[] }>(
      `SELECT field, candidates FROM merge_conflict WHERE field = 'jobTitle'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.flatMap((r) => r.candidates.map((c) => c.value))).toEqual(
      expect.arrayContaining(['Mathematician', 'Countess']),
    );
  });

  it('no ping-pong: after a burst of edits and a quiet period, writes to the emulators stop growing', async () => {
    const adaA = (await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))!;
    for (let i = 0; i < 5; i++) {
      await s.emulator.hubspot.updateContact(PORTAL_A, adaA.id, { jobtitle: `Title ${i}` });
    }
    await waitFor(
      async () =>
        (await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))?.properties.jobtitle === 'Title 4',
      { timeoutMs: 30_000, describe: 'the last title reached B' },
    );
    await sleep(3_000);
    const before = await s.emulator.writeCounts();
    await sleep(4_000);
    const after = await s.emulator.writeCounts();
    expect(after).toEqual(before);
  });

  interface PersonBody {
    id: string;
    version: number;
    fields: Record<string, unknown>;
    provenance: Record<string, { source: { kind: string } }>;
  }
  const ada = async (): Promise<PersonBody> => {
    const res = await s.api<{ data: PersonBody[] }>(
      'GET',
      '/api/v1/people?email=ada.lovelace@analytical.example',
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0]!;
  };
  const titles = async () => ({
    a: (await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))?.properties.jobtitle,
    b: (await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))?.properties.jobtitle,
  });

  it("a salesperson's edit in Syncline reaches both CRMs; a stale version is refused", async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const before = await ada();
    const res = await s.api<PersonBody>(
      'PATCH',
      `/api/v1/people/${before.id}`,
      { fields: { jobTitle: 'Chief Analyst' } },
      { headers: { 'if-match': `"${before.version}"` } },
    );
    expect(res.status).toBe(200);
    expect(res.body.fields.jobTitle).toBe('Chief Analyst');
    expect(res.body.provenance.jobTitle?.source.kind).toBe('user');
    expect(res.headers.get('etag')).toBe(`"${res.body.version}"`);
    await waitFor(titles, {
      until: (t) => t.a === 'Chief Analyst' && t.b === 'Chief Analyst',
      timeoutMs: 20_000,
      describe: 'both CRMs show the title set in Syncline',
    });
    const stale = await s.api<{ error: { code: string } }>(
      'PATCH',
      `/api/v1/people/${before.id}`,
      { fields: { jobTitle: 'Lost update' } },
      { headers: { 'if-match': `"${before.version}"` } },
    );
    expect([stale.status, stale.body.error.code]).toEqual([412, 'precondition_failed']);
  });

  it('under the manual policy both CRMs keep their own value until a person settles it in the inbox; then both show the choice', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const person = await ada();
    // On the log before the edits below: they are merged under it, whenever the workers read them.
    const manual = await s.api('PUT', '/api/v1/policies/person', {
      fields: { jobTitle: { kind: 'manual' } },
    });
    expect(manual.status, JSON.stringify(manual.body)).toBe(200);
    const adaA = (await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))!;
    const adaB = (await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))!;
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A, null);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B, null);
    await s.emulator.hubspot.updateContact(PORTAL_A, adaA.id, { jobtitle: 'Professor' });
    await s.emulator.hubspot.updateContact(PORTAL_B, adaB.id, { jobtitle: 'Enchantress of Numbers' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    const open = await waitFor(
      async () =>
        (
          await s.api<{ data: { id: string; field: string; candidates: { value: unknown }[] }[] }>(
            'GET',
            `/api/v1/conflicts?recordId=${person.id}`,
          )
        ).body.data.filter((c) => c.field === 'jobTitle'),
      { until: (list) => list.length > 0, timeoutMs: 20_000, describe: 'an open jobTitle conflict' },
    );
    expect(open[0]!.candidates.map((c) => c.value)).toEqual(
      expect.arrayContaining(['Professor', 'Enchantress of Numbers']),
    );
    // Nothing was written over either side while the conflict is open.
    await sleep(2_000);
    expect(await titles()).toEqual({ a: 'Professor', b: 'Enchantress of Numbers' });
    const settled = await s.api<PersonBody>('POST', `/api/v1/conflicts/${open[0]!.id}/resolve`, {
      value: 'Enchantress of Numbers',
    });
    expect(settled.status).toBe(200);
    expect(settled.body.fields.jobTitle).toBe('Enchantress of Numbers');
    await waitFor(titles, {
      until: (t) => t.a === 'Enchantress of Numbers' && t.b === 'Enchantress of Numbers',
      timeoutMs: 20_000,
      describe: 'both CRMs show the value chosen in the inbox',
    });
    const after = await s.api<{ data: unknown[] }>('GET', `/api/v1/conflicts?recordId=${person.id}`);
    expect(after.body.data).toEqual([]);
  });
});
