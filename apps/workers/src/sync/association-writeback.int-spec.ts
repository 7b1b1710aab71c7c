import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, type TestApp } from '../../../sync-api/src/testing/test-app';
import {
  type ApiAndWorkers,
  emulatorControl,
  eventually,
  startApiAndWorkers,
} from '../testing/api-and-workers';
import type { Workers } from '../workers';

const APP_ID = 5004;
const CLIENT_SECRET = 'association-writeback-spec-secret';
const REP = `rep-${Math.floor(Math.random() * 1e6)}@assoc-writeback.example`;

interface HubspotObject {
  id: string;
  properties: Record<string, string | null>;
  associations?: Record<string, { results: { id: string; type: string }[] }>;
}

interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

/**
 * Associations written back, through the real API, sync stage and pushers against the HubSpot
 * emulator: two portals (CRM A and CRM B) in one workspace that know the same person and
 * companies under their own ids. Every assertion reads the emulator's association state or its
 * request log.
 */
describe('associations written back to the other CRM (API, Postgres, Redis, HubSpot emulator)', () => {
  let t: TestApp;
  let admin: string;
  let workspaceId: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let pool: Pool;
  let stack: ApiAndWorkers | undefined;
  const portalA = 7_100 + Math.floor(Math.random() * 400);
  const portalB = portalA + 400;
  const connections: Record<number, string> = {};
  /** Each portal's record ids of the seeded records, by name. */
  const ids: Record<number, Record<string, string>> = { [portalA]: {}, [portalB]: {} };

  const control = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.hubspotUrl)<T>(method, path, body);
  const google = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.googleUrl)<T>(method, path, body);
  const objects = async (portal: number, type: string): Promise<HubspotObject[]> =>
    (
      await control<{ results: HubspotObject[] }>(
        'GET',
        `/_emulator/hubspot/portals/${portal}/objects/${type}`,
      )
    ).results;
  /** The ids a record is associated with, of one type, as the portal holds them now. */
  const associated = async (portal: number, type: string, id: string, to: string): Promise<string[]> => {
    const record = (await objects(portal, type)).find((r) => r.id === id);
    return [...new Set((record?.associations?.[to]?.results ?? []).map((r) => r.id))].sort();
  };
  const requestsTo = (portal: number) =>
    control<LoggedRequest[]>('GET', `/_emulator/requests?service=hubspot&account=${portal}`);
  /** Association writes a portal received, by endpoint. */
  const associationWrites = async (portal: number) =>
    (await requestsTo(portal))
      .filter((r) => r.method !== 'GET' && /\/associations\//.test(r.path) && !/batch\/read$/.test(r.path))
      .map((r) => `${r.method} ${r.path}`);
  /** Every write a portal received (reads, searches and batch reads left out). */
  const writeCount = async (portal: number) =>
    (await requestsTo(portal)).filter(
      (r) => r.method !== 'GET' && !/\/search$|\/batch\/read$|\/oauth\//.test(r.path),
    ).length;
  const associate = (portal: number, from: string, fromId: string, to: string, toId: string) =>
    control(
      'PUT',
      `/_emulator/hubspot/portals/${portal}/ui/associations/${from}/${fromId}/${to}/${toId}`,
      {},
    );
  const dissociate = (portal: number, from: string, fromId: string, to: string, toId: string) =>
    control('DELETE', `/_emulator/hubspot/portals/${portal}/ui/associations/${from}/${fromId}/${to}/${toId}`);
  const api = async <T>(method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<T>(), text: res.body };
  };
  const count = async (sql: string, ...values: unknown[]): Promise<number> =>
    (await pool.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;
  const pull = (portal: number) =>
    workers.jobs.enqueue('connection.pull', { connectionId: connections[portal]! });

  /** No pull or push waiting or running, nothing unmerged, no write pending. */
  const settled = () =>
    eventually(async () => {
      for (const queue of ['pull', 'push'] as const) {
        const counts = await workers.jobs
          .queue(queue)
          .getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        expect(
          Object.values(counts).reduce((x, y) => x + y, 0),
          queue,
        ).toBe(0);
      }
      expect(
        await count(
          `SELECT count(*)::int AS n FROM change_event e
             LEFT JOIN consumer_offset o ON o.group_name = 'sync' AND o.partition = e.partition
            WHERE e.workspace_id = $1 AND e."offset" > COALESCE(o.committed_offset, 0)`,
          workspaceId,
        ),
      ).toBe(0);
      expect(
        await count(
          `SELECT count(*)::int AS n FROM outbox WHERE workspace_id = $1 AND status IN ('pending', 'sending')`,
          workspaceId,
        ),
      ).toBe(0);
    });
  /** What a webhook would bring: both portals read again, until nothing more moves. */
  const roundTrip = async () => {
    for (let i = 0; i < 2; i++) {
      await pull(portalA);
      await pull(portalB);
      await settled();
    }
  };

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const grants: Record<number, { accessToken: string; refreshToken: string; clientId: string }> = {};
    for (const portal of [portalA, portalB]) {
      grants[portal] = await control('POST', '/_emulator/hubspot/portals', {
        portalId: portal,
        appId: APP_ID,
        clientSecret: CLIENT_SECRET,
      });
      const seed = async (name: string, type: string, properties: Record<string, string>) => {
        const created = await control<HubspotObject>(
          'POST',
          `/_emulator/hubspot/portals/${portal}/ui/${type}`,
          {
            properties,
          },
        );
        ids[portal]![name] = created.id;
      };
      // The same person and companies in both CRMs, none associated yet.
      await seed('ada', 'contacts', { email: 'ada@acme.example', firstname: 'Ada', lastname: 'Lovelace' });
      await seed('acme', 'companies', { name: 'Acme', domain: 'acme.example' });
      await seed('initech', 'companies', { name: 'Initech', domain: 'initech.example' });
      await seed('grace', 'contacts', {
        email: 'grace@navy.example',
        firstname: 'Grace',
        lastname: 'Hopper',
      });
      await seed('navy', 'companies', { name: 'Navy', domain: 'navy.example' });
    }
    // Before Syncline: A associates Grace with the Navy; B holds both, unassociated.
    await associate(portalA, 'contacts', ids[portalA]!.grace!, 'companies', ids[portalA]!.navy!);
    stack = await startApiAndWorkers({
      label: 'workers_assoc_writeback',
      emulators,
      hubspot: { appId: APP_ID, clientId: grants[portalA]!.clientId, clientSecret: CLIENT_SECRET },
      google: await google<{ clientId: string; clientSecret: string }>(
        'GET',
        '/_emulator/google/oauth-client',
      ),
      logLevelVar: 'ASSOC_SPEC_LOG_LEVEL',
    });
    ({ t, workers, pool } = stack);
    const seeded = await seedWorkspace(t.prisma, 'Associations');
    admin = seeded.adminKey;
    workspaceId = seeded.workspaceId;
    for (const portal of [portalA, portalB]) {
      const grant = grants[portal]!;
      const created = await api<{ id: string }>('POST', '/api/v1/connections', {
        provider: 'hubspot',
        externalAccountId: String(portal),
        credentials: {
          accessToken: grant.accessToken,
          refreshToken: grant.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
      });
      expect(created.status, created.text).toBe(201);
      connections[portal] = created.body.id;
    }
    // Both backfilled, linked and reconciled (creates and associations go to reconciled connections only).
    await eventually(async () => {
      const { rows } = await pool.query<{ status: string; reconciled: boolean }>(
        `SELECT status::text AS status, reconciled_at IS NOT NULL AS reconciled FROM connection
          WHERE workspace_id = $1 AND provider = 'hubspot'`,
        [workspaceId],
      );
      expect(rows).toEqual([
        { status: 'live', reconciled: true },
        { status: 'live', reconciled: true },
      ]);
    }, 60_000);
    await settled();
    // The same person and companies, linked across the two CRMs: nothing was created.
    expect(await objects(portalB, 'contacts')).toHaveLength(2);
    expect(await objects(portalB, 'companies')).toHaveLength(3);
  }, 120_000);

  afterAll(async () => {
    if (stack) await stack.stop();
    else await emulators?.close();
  });

  it('an association A had before both were connected: written to B once B is reconciled, once', async () => {
    const [a, b] = [ids[portalA]!, ids[portalB]!];
    await eventually(async () =>
      expect(await associated(portalB, 'contacts', b.grace!, 'companies')).toEqual([b.navy]),
    );
    await roundTrip();
    expect(await associationWrites(portalB)).toEqual([
      'POST /crm/v4/associations/contacts/companies/batch/associate/default',
    ]);
    expect(await associationWrites(portalA)).toEqual([]);
    expect(await associated(portalA, 'contacts', a.grace!, 'companies')).toEqual([a.navy]);
  });

  it("a contact associated with a company in A: B's copies are associated exactly once, nothing is written back to A", async () => {
    const [a, b] = [ids[portalA]!, ids[portalB]!];
    const earlier = (await associationWrites(portalB)).length;
    await associate(portalA, 'contacts', a.ada!, 'companies', a.acme!);
    await pull(portalA);
    await eventually(async () =>
      expect(await associated(portalB, 'contacts', b.ada!, 'companies')).toEqual([b.acme]),
    );
    // B reports our write back (as its associationChange webhook would make us read it), A again.
    await roundTrip();
    expect((await associationWrites(portalB)).slice(earlier)).toEqual([
      'POST /crm/v4/associations/contacts/companies/batch/associate/default',
    ]);
    expect(await associationWrites(portalA)).toEqual([]);
    expect(await associated(portalA, 'contacts', a.ada!, 'companies')).toEqual([a.acme]);
    expect(await associated(portalB, 'companies', b.acme!, 'contacts')).toEqual([b.ada]);
    // The unified record shows one association with both CRMs as its sources.
    const { rows } = await pool.query<{ sources: string[] }>(
      `SELECT array_agg(r.connection_id::text ORDER BY r.connection_id) AS sources FROM entity_relation r
         JOIN source_link l ON l.entity_id = r.from_id AND l.connection_id = $2 AND l.external_id = $3
        WHERE r.workspace_id = $1 AND r.kind = 'crm' AND r.from_type = 'person' AND r.to_type = 'company'`,
      [workspaceId, connections[portalA], a.ada],
    );
    expect(rows[0]?.sources).toEqual([connections[portalA], connections[portalB]].sort());
  });

  it('no ping-pong: reading both CRMs again and again writes nothing more anywhere', async () => {
    const before = [await writeCount(portalA), await writeCount(portalB)];
    await roundTrip();
    await roundTrip();
    expect([await writeCount(portalA), await writeCount(portalB)]).toEqual(before);
  });

  it("removed in A, its only source: removed in B (Syncline's own copy), and nothing else moves", async () => {
    const [a, b] = [ids[portalA]!, ids[portalB]!];
    const earlier = (await associationWrites(portalB)).length;
    await dissociate(portalA, 'contacts', a.ada!, 'companies', a.acme!);
    await pull(portalA);
    await eventually(async () =>
      expect(await associated(portalB, 'contacts', b.ada!, 'companies')).toEqual([]),
    );
    await roundTrip();
    expect((await associationWrites(portalB)).slice(earlier)).toEqual([
      'POST /crm/v4/associations/contacts/companies/batch/archive',
    ]);
    // Grace's association, which A still has, stays in B.
    expect(await associated(portalB, 'contacts', b.grace!, 'companies')).toEqual([b.navy]);
    expect(await associationWrites(portalA)).toEqual([]);
    expect(await associated(portalA, 'contacts', a.ada!, 'companies')).toEqual([]);
  });

  it("B's own association is copied to A and never removed from B, even when A's copy is removed", async () => {
    const [a, b] = [ids[portalA]!, ids[portalB]!];
    const writesToB = (await associationWrites(portalB)).length;
    await associate(portalB, 'contacts', b.ada!, 'companies', b.initech!);
    await pull(portalB);
    await eventually(async () =>
      expect(await associated(portalA, 'contacts', a.ada!, 'companies')).toEqual([a.initech]),
    );
    await roundTrip();
    expect(await associationWrites(portalA)).toEqual([
      'POST /crm/v4/associations/contacts/companies/batch/associate/default',
    ]);
    // Someone removes our copy in A: B's association is B's own, it stays; and A's removal of a
    // copy is not undone (nothing is written back to A again).
    await dissociate(portalA, 'contacts', a.ada!, 'companies', a.initech!);
    await roundTrip();
    await roundTrip();
    expect(await associated(portalB, 'contacts', b.ada!, 'companies')).toEqual([b.initech]);
    expect(await associated(portalA, 'contacts', a.ada!, 'companies')).toEqual([]);
    expect((await associationWrites(portalB)).length).toBe(writesToB);
    expect(await associationWrites(portalA)).toHaveLength(1);
  });

  it('a deal made in A with its contact and company: created in B, then associated there with B’s records', async () => {
    const [a, b] = [ids[portalA]!, ids[portalB]!];
    const deal = await control<HubspotObject>('POST', `/_emulator/hubspot/portals/${portalA}/ui/deals`, {
      properties: { dealname: 'Acme renewal', amount: '12000' },
    });
    await associate(portalA, 'deals', deal.id, 'contacts', a.ada!);
    await associate(portalA, 'deals', deal.id, 'companies', a.acme!);
    await pull(portalA);
    const inB = await eventually(async () => {
      const found = (await objects(portalB, 'deals')).find((d) => d.properties.dealname === 'Acme renewal');
      expect(found).toBeDefined();
      expect(await associated(portalB, 'deals', found!.id, 'contacts')).toEqual([b.ada]);
      expect(await associated(portalB, 'deals', found!.id, 'companies')).toEqual([b.acme]);
      return found!;
    });
    await roundTrip();
    expect(await objects(portalB, 'deals')).toHaveLength(1);
    expect(await associated(portalB, 'deals', inB.id, 'contacts')).toEqual([b.ada]);
    const toB = await associationWrites(portalB);
    expect(toB.filter((w) => w.includes('/deals/contacts/batch/associate/default'))).toHaveLength(1);
    expect(toB.filter((w) => w.includes('/deals/companies/batch/associate/default'))).toHaveLength(1);
    expect(await associationWrites(portalA)).toHaveLength(1);
  });

  it('a replay of the workspace from the beginning owes nothing new: the emulators get no more writes', async () => {
    const before = [await writeCount(portalA), await writeCount(portalB)];
    const created = await api<{ id: string }>('POST', '/api/v1/replays', {
      from: 'beginning',
      mode: 'apply',
    });
    expect(created.status, created.text).toBe(202);
    await eventually(async () => {
      const { body } = await api<{ status: string; failureReason: string | null }>(
        'GET',
        `/api/v1/replays/${created.body.id}`,
      );
      expect([body.status, body.failureReason]).toEqual(['succeeded', null]);
    });
    await settled();
    await roundTrip();
    await roundTrip();
    expect([await writeCount(portalA), await writeCount(portalB)]).toEqual(before);
  });
  it('a mail from Ada read from Gmail: one email engagement in each CRM, associated with Ada there', async () => {
    const grant = await google<{ accessToken: string; refreshToken: string }>(
      'POST',
      '/_emulator/google/users',
      {
        email: REP,
      },
    );
    await google('POST', `/_emulator/google/users/${encodeURIComponent(REP)}/ui/gmail/messages`, {
      from: `Ada Lovelace <ada@acme.example>`,
      to: [REP],
      subject: 'Numbers for Q4',
      text: 'Here they are.',
      messageId: '<numbers-q4@acme.example>',
    });
    const created = await api<{ id: string }>('POST', '/api/v1/connections', {
      provider: 'gmail',
      externalAccountId: REP,
      credentials: {
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    expect(created.status, created.text).toBe(201);
    const engagementIn = async (portal: number) => {
      const mails = (await objects(portal, 'emails')).filter(
        (e) => e.properties.hs_email_subject === 'Numbers for Q4',
      );
      expect(mails).toHaveLength(1);
      return mails[0]!;
    };
    await eventually(async () => {
      for (const portal of [portalA, portalB])
        expect(await associated(portal, 'emails', (await engagementIn(portal)).id, 'contacts')).toEqual([
          ids[portal]!.ada,
        ]);
    }, 60_000);
    // Both CRMs report the engagements and Ada back, Gmail is read again: the associations stand,
    // written once each (Ada's side reaches them through their mirror rows).
    await roundTrip();
    await workers.jobs.enqueue('connection.pull', { connectionId: created.body.id });
    await settled();
    await roundTrip();
    for (const portal of [portalA, portalB]) {
      const mail = await engagementIn(portal);
      expect(await associated(portal, 'contacts', ids[portal]!.ada!, 'emails')).toEqual([mail.id]);
      expect(
        (await associationWrites(portal)).filter((w) =>
          w.includes('/emails/contacts/batch/associate/default'),
        ),
      ).toHaveLength(1);
    }
  });
});
