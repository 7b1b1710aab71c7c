import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DryRunReport } from '../apps/workers/src/dry-run/dry-run-report';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { type SyncSystem, sleep, startSystem, waitFor, waitForReconciled } from './support/system';

// The dry run of a new connection, on the whole system (API and workers processes, the
// HubSpot emulator with webhooks on): CRM A is live; CRM B is connected in dry run. Its
// backfill and its webhooks are read, nothing is written anywhere, and the report says what
// enabling it will do; after the enable, the emulators and the outbox show exactly that.

const PORTAL_A = 3201;
const PORTAL_B = 3202;

interface ConnectionBody {
  id: string;
  status: string;
  dryRun: boolean;
}

describe('dry run of a new CRM', () => {
  let s: SyncSystem;
  let crmA: string;
  let crmB: string;
  let report: DryRunReport;
  let outboxBeforeEnable = 0;
  const contacts = (portal: number) => s.emulator.hubspot.objects(portal, 'contacts');
  const byEmail = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await contacts(portal)).find((c) => c.properties.email === email);
  const connection = async (id: string) =>
    (await s.api<ConnectionBody>('GET', `/api/v1/connections/${id}`)).body;

  const dumpState = async () => {
    s.dumpLogs('dry run');
    console.log(
      await s.query('SELECT provider, status, dry_run, backfill_seen, reconciled_at FROM connection'),
      await s.query('SELECT id, connection_id, op, status, fields, last_error FROM outbox ORDER BY id'),
      await s.query('SELECT connection_id, event_key, fields FROM staged_change ORDER BY id'),
      await s.query('SELECT id, display_name, fields FROM entity ORDER BY id'),
      JSON.stringify(report, null, 1),
      await s.query('SELECT error_code, error_message FROM dead_letter'),
    );
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'dry_run', workers: 1 });
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhooks: true });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'ada.lovelace@analytical.example',
      firstname: 'Ada',
      lastname: 'Lovelace',
      phone: '+44 20 7946 0018',
      jobtitle: 'Analyst',
    });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'alan@bletchley.example',
      firstname: 'Alan',
      lastname: 'Turing',
      jobtitle: 'Cryptanalyst',
    });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'grace@navy.example',
      firstname: 'Grace',
      lastname: 'Hopper',
    });
    const policies = await s.api('GET', '/api/v1/policies/person');
    const put = await s.api(
      'PUT',
      '/api/v1/policies/person',
      { fields: { jobTitle: { kind: 'manual' } } },
      { headers: { 'if-match': policies.headers.get('etag') ?? '"0"' } },
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    crmA = (await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' })).id;
    await waitForReconciled(s, crmA, { people: 3, name: 'CRM A' });

    // B's people: two of A's (one adding a field, one editing a field A has), two new ones.
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'ada.lovelace@analytical.example',
      firstname: 'Ada',
      lastname: 'Lovelace',
      company: 'Analytical Engines',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'alan@bletchley.example',
      firstname: 'Alan',
      lastname: 'Turing',
      jobtitle: 'Mathematician',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'katherine@nasa.example',
      firstname: 'Katherine',
      lastname: 'Johnson',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'linus@kernel.example',
      firstname: 'Linus',
      lastname: 'Torvalds',
    });
    const res = await s.api<ConnectionBody>('POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: String(PORTAL_B),
      displayName: 'CRM B',
      credentials: grantCredentials(b),
      dryRun: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.dryRun).toBe(true);
    crmB = res.body.id;
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  it("reads B's backfill and its webhooks while writing nothing anywhere", async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    const writesBefore = {
      a: await s.emulator.writeCounts({ account: PORTAL_A }),
      b: await s.emulator.writeCounts({ account: PORTAL_B }),
    };
    await waitFor(async () => (await connection(crmB)).status, {
      until: (status) => status === 'live',
      timeoutMs: 60_000,
      describe: "B's backfill done",
    });
    // An edit in B during the dry run arrives by webhook and is staged like the backfill.
    const linus = (await byEmail(PORTAL_B, 'linus@kernel.example'))!;
    await s.emulator.hubspot.updateContact(PORTAL_B, linus.id, { jobtitle: 'Maintainer' });
    await waitFor(
      async () =>
        (
          await s.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM staged_change WHERE connection_id = $1 AND fields::text LIKE '%Maintainer%'`,
            [crmB],
          )
        )[0]?.n ?? 0,
      { until: (n) => n > 0, timeoutMs: 30_000, describe: "B's edit staged" },
    );
    // Long enough for the sync stage, an outbox sweep (every 5 s: it runs the reconcile that
    // would create A's people in B) and a push to have run, had anything been owed.
    await sleep(7_000);
    expect(await s.query('SELECT 1 FROM change_event WHERE connection_id = $1', [crmB])).toEqual([]);
    expect(await s.query('SELECT 1 FROM source_link WHERE connection_id = $1', [crmB])).toEqual([]);
    expect(
      await s.query(`SELECT 1 FROM outbox WHERE status = 'pending' OR connection_id = $1`, [crmB]),
    ).toEqual([]);
    expect({
      a: await s.emulator.writeCounts({ account: PORTAL_A }),
      b: await s.emulator.writeCounts({ account: PORTAL_B }),
    }).toEqual(writesBefore);
    expect(await contacts(PORTAL_A)).toHaveLength(3);
    expect(await contacts(PORTAL_B)).toHaveLength(4);
    const people = await s.api<{ data: unknown[] }>('GET', '/api/v1/people?limit=50');
    expect(people.body.data).toHaveLength(3);
  });

  it('reports the links, creations, field changes, conflicts and writes enabling B would make', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    // As the page reads it: again while the workers compute it (202) or a newer one (`stale`).
    const url = `/api/v1/connections/${crmB}/dry-run`;
    let res = await s.api<DryRunReport & { stale?: boolean }>('GET', url);
    for (let tries = 0; tries < 60 && (res.status === 202 || res.body.stale === true); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      res = await s.api<DryRunReport & { stale?: boolean }>('GET', url);
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    report = res.body;
    expect(report).toMatchObject({ connectionId: crmB, complete: true, summary: { links: 2, creations: 2 } });
    expect(report.failures).toEqual([]);
    expect(report.links.map((l) => l.displayName).sort()).toEqual(['Ada Lovelace', 'Alan Turing']);
    expect(report.creations.map((c) => c.fields.email).sort()).toEqual([
      'katherine@nasa.example',
      'linus@kernel.example',
    ]);
    expect(report.creations.find((c) => c.fields.email === 'linus@kernel.example')?.fields.jobTitle).toBe(
      'Maintainer',
    );
    const adaChange = report.changes.find((c) => c.displayName === 'Ada Lovelace');
    expect(adaChange?.fields.company).toMatchObject({ from: null, to: 'Analytical Engines' });
    const conflict = report.conflicts.find((c) => c.field === 'jobTitle' && c.policy === 'manual');
    expect(conflict?.status).toBe('open');
    expect(conflict?.candidates.map((c) => c.value).sort()).toEqual(['Cryptanalyst', 'Mathematician']);
    const toA = report.writes.find((w) => w.connectionId === crmA);
    expect(toA?.counts.create).toBe(2);
    expect(toA?.counts.update).toBeGreaterThanOrEqual(1);
    const toB = report.writes.find((w) => w.connectionId === crmB);
    expect(toB?.self).toBe(true);
    expect(toB?.sample.filter((w) => w.op === 'create').map((w) => w.fields.email)).toEqual([
      'grace@navy.example',
    ]);
    const [row] = await s.query<{ max: string | null }>('SELECT max(id)::text AS max FROM outbox');
    outboxBeforeEnable = Number(row?.max ?? 0);
  });

  it('after the enable, the outbox and both CRMs show what the report said', async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    const res = await s.api<ConnectionBody>('POST', `/api/v1/connections/${crmB}/enable`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.dryRun).toBe(false);
    await waitFor(
      async () => {
        const katherine = await byEmail(PORTAL_A, 'katherine@nasa.example');
        const linus = await byEmail(PORTAL_A, 'linus@kernel.example');
        const grace = await byEmail(PORTAL_B, 'grace@navy.example');
        const [pending] = await s.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox WHERE status IN ('pending', 'sending')`,
        );
        return !!katherine && !!linus && !!grace && pending?.n === 0;
      },
      { timeoutMs: 60_000, describe: 'both CRMs written and the outbox drained' },
    );

    // The writes the enable's merge and B's reconcile queued, and nothing else: per connection
    // and operation as reported, and (few enough to all be in the sample) the very rows.
    const rows = await s.query<{ connection_id: string; op: string; entity_id: string; fields: unknown }>(
      `SELECT connection_id::text AS connection_id, op, entity_id::text AS entity_id, fields
         FROM outbox WHERE id > $1 ORDER BY id`,
      [outboxBeforeEnable],
    );
    const counts = (list: readonly { connection_id: string; op: string }[]) => {
      const out: Record<string, Record<string, number>> = {};
      for (const r of list) {
        const byOp = out[r.connection_id] ?? {};
        byOp[r.op] = (byOp[r.op] ?? 0) + 1;
        out[r.connection_id] = byOp;
      }
      return out;
    };
    expect(counts(rows)).toEqual(Object.fromEntries(report.writes.map((w) => [w.connectionId, w.counts])));
    const key = (r: { connection_id: string; op: string; entity_id: string }) =>
      `${r.connection_id} ${r.op} ${r.entity_id}`;
    const reported = report.writes.flatMap((w) =>
      w.sample.map((write) => ({
        connection_id: w.connectionId,
        op: write.op,
        entity_id: write.entityId,
        fields: write.fields,
      })),
    );
    expect([...rows].sort((x, y) => key(x).localeCompare(key(y)))).toEqual(
      reported.sort((x, y) => key(x).localeCompare(key(y))),
    );

    // Links, entity changes and the conflict as reported.
    const links = await s.query<{ external_id: string; entity_id: string }>(
      'SELECT external_id, entity_id::text AS entity_id FROM source_link WHERE connection_id = $1',
      [crmB],
    );
    for (const link of report.links)
      expect(links.find((l) => l.external_id === link.externalId)?.entity_id).toBe(link.entityId);
    for (const creation of report.creations)
      for (const externalId of creation.externalIds)
        expect(links.find((l) => l.external_id === externalId)?.entity_id).toBe(creation.entityId);
    for (const change of report.changes) {
      const person = await s.api<{ fields: Record<string, unknown> }>(
        'GET',
        `/api/v1/people/${change.entityId}`,
      );
      for (const [field, { to }] of Object.entries(change.fields))
        expect(person.body.fields[field]).toEqual(to);
    }
    const conflicts = await s.query<{ id: string; status: string }>(
      'SELECT id::text AS id, status::text AS status FROM merge_conflict',
    );
    for (const conflict of report.conflicts)
      expect(conflicts.find((c) => c.id === conflict.id)?.status).toBe(conflict.status);

    // And in the CRMs: A has B's people with B's values, B has A's person and A's values.
    expect((await byEmail(PORTAL_A, 'linus@kernel.example'))?.properties.jobtitle).toBe('Maintainer');
    expect((await byEmail(PORTAL_A, 'ada.lovelace@analytical.example'))?.properties.company).toBe(
      'Analytical Engines',
    );
    expect((await byEmail(PORTAL_B, 'ada.lovelace@analytical.example'))?.properties.phone).toBe(
      '+44 20 7946 0018',
    );
    expect(await contacts(PORTAL_A)).toHaveLength(5);
    expect(await contacts(PORTAL_B)).toHaveLength(5);
  });
});
