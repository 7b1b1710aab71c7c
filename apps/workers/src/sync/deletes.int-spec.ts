import { randomBytes } from 'node:crypto';
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

const APP_ID = 5003;
const CLIENT_SECRET = 'deletes-spec-secret';
const tag = randomBytes(3).toString('hex');
const ADA = `ada-${tag}@deletes.example`;
const GRACE = `grace-${tag}@deletes.example`;

interface Contact {
  id: string;
  archived: boolean;
  properties: Record<string, string | null>;
}

interface PersonView {
  id: string;
  fields: Record<string, unknown>;
  sourceLinks: { connectionId: string }[];
  deletedIn: { connectionId: string; name: string | null; provider: string | null; at: string }[];
  flags: Record<string, unknown>;
}

/**
 * A record deleted in one system, through the real API and workers against the HubSpot
 * emulator: two portals that know the same people. By default (delete policy `unlink`) the
 * record is unlinked from that system and flagged, and nothing is deleted anywhere else; the
 * record read API names the system it was deleted in. Under `archive`, the other copies go.
 */
describe('deletes: unlinked and flagged, never deleted elsewhere by default', () => {
  let t: TestApp;
  let admin: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let pool: Pool;
  let stack: ApiAndWorkers | undefined;
  const portalA = 9_400 + Math.floor(Math.random() * 400);
  const portalB = portalA + 400;
  let connectionA: string;
  let connectionB: string;

  const control = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.hubspotUrl)<T>(method, path, body);
  const contactIn = async (portal: number, email: string): Promise<Contact | undefined> =>
    (
      await control<{ results: Contact[] }>(
        'GET',
        `/_emulator/hubspot/portals/${portal}/objects/contacts?includeArchived=true`,
      )
    ).results.find((c) => c.properties.email === email);
  const api = async <T>(method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<T>() };
  };
  const personByEmail = async (email: string): Promise<PersonView> => {
    const res = await api<{ data: PersonView[] }>('GET', `/api/v1/people?email=${encodeURIComponent(email)}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0]!;
  };
  /** A pull, once none runs: one asked for while one runs would be dropped as its duplicate. */
  const pull = async (connectionId: string) => {
    await eventually(async () => {
      const counts = await workers.jobs.queue('pull').getJobCounts('waiting', 'active', 'delayed');
      expect(Object.values(counts).reduce((x, y) => x + y, 0)).toBe(0);
    });
    await workers.jobs.enqueue('connection.pull', { connectionId });
  };
  const outboxTo = async (connectionId: string, entityId: string) =>
    (
      await pool.query<{ op: string; status: string }>(
        'SELECT op, status FROM outbox WHERE connection_id = $1 AND entity_id = $2 ORDER BY id',
        [connectionId, entityId],
      )
    ).rows;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const grants: Record<number, { accessToken: string; refreshToken: string; clientId: string }> = {};
    for (const portal of [portalA, portalB]) {
      grants[portal] = await control('POST', '/_emulator/hubspot/portals', {
        portalId: portal,
        appId: APP_ID,
        clientSecret: CLIENT_SECRET,
      });
      for (const [email, firstname, lastname] of [
        [ADA, 'Ada', 'Lovelace'],
        [GRACE, 'Grace', 'Hopper'],
      ] as const)
        await control('POST', `/_emulator/hubspot/portals/${portal}/ui/contacts`, {
          properties: { email, firstname, lastname },
        });
    }
    stack = await startApiAndWorkers({
      label: 'workers_deletes',
      emulators,
      hubspot: { appId: APP_ID, clientId: grants[portalA]?.clientId, clientSecret: CLIENT_SECRET },
      // The API asks the portal whose account the credentials open.
      appEnv: { HUBSPOT_API_BASE_URL: emulators.hubspotUrl },
      logLevelVar: 'DELETES_SPEC_LOG_LEVEL',
    });
    ({ t, workers, pool } = stack);
    const seeded = await seedWorkspace(t.prisma, 'Deletes');
    admin = seeded.adminKey;
    const connect = async (portal: number, displayName: string) => {
      const grant = grants[portal];
      const res = await api<{ id: string }>('POST', '/api/v1/connections', {
        provider: 'hubspot',
        externalAccountId: String(portal),
        displayName,
        credentials: {
          accessToken: grant?.accessToken,
          refreshToken: grant?.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    };
    connectionA = await connect(portalA, 'CRM A');
    connectionB = await connect(portalB, 'CRM B');
    await eventually(async () => {
      for (const email of [ADA, GRACE]) expect((await personByEmail(email)).sourceLinks).toHaveLength(2);
    });
  });

  afterAll(async () => {
    if (stack) await stack.stop();
    else await emulators?.close();
  });

  it('a record nobody deleted has an empty deletedIn, and the OpenAPI document describes it', async () => {
    const ada = await personByEmail(ADA);
    expect(ada.deletedIn).toEqual([]);
    const doc = await t.app.inject({ method: 'GET', url: '/docs/json' });
    const get = doc.json<{ paths: Record<string, { get?: unknown }> }>().paths['/api/v1/people/{id}']?.get;
    const described = JSON.stringify(get);
    for (const key of ['deletedIn', 'connectionId', 'provider', 'name', 'at'])
      expect(described).toContain(`"${key}"`);
  });

  it('deleted in CRM A: unlinked from A, flagged with A, kept with its values, and B keeps its contact', async () => {
    const before = await personByEmail(ADA);
    const owedToA = await outboxTo(connectionA, before.id);
    const inA = await contactIn(portalA, ADA);
    const deletedAt = Date.now();
    await control('DELETE', `/_emulator/hubspot/portals/${portalA}/ui/contacts/${inA!.id}`);
    await pull(connectionA);

    const ada = await eventually(async () => {
      const view = await personByEmail(ADA);
      expect(view.deletedIn).toHaveLength(1);
      return view;
    });
    expect(ada.id).toBe(before.id);
    expect(ada.deletedIn).toEqual([
      { connectionId: connectionA, name: 'CRM A', provider: 'hubspot', at: expect.any(String) },
    ]);
    expect(Math.abs(Date.parse(ada.deletedIn[0]!.at) - deletedAt)).toBeLessThan(60_000);
    // The same on a get by id, and in the raw flags it comes from.
    const byId = await api<PersonView>('GET', `/api/v1/people/${ada.id}`);
    expect(byId.body.deletedIn).toEqual(ada.deletedIn);
    expect(byId.body.flags.deletedIn).toEqual([{ connectionId: connectionA, at: ada.deletedIn[0]!.at }]);
    expect(ada.sourceLinks.map((l) => l.connectionId)).toEqual([connectionB]);
    expect(ada.fields).toMatchObject({ email: ADA, firstName: 'Ada', lastName: 'Lovelace' });

    // Nothing deleted in B, and nothing owed to A (not even the record made again there).
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await contactIn(portalB, ADA))?.archived).toBe(false);
    expect(await outboxTo(connectionB, ada.id)).not.toContainEqual(expect.objectContaining({ op: 'delete' }));
    expect(await outboxTo(connectionA, ada.id)).toEqual(owedToA);
  });

  it('under the archive policy, a delete in A archives the copy in B', async () => {
    // No route sets it yet: the connection's delete_policy column.
    await pool.query(`UPDATE connection SET delete_policy = 'archive' WHERE id = $1`, [connectionB]);
    const inA = await contactIn(portalA, GRACE);
    await control('DELETE', `/_emulator/hubspot/portals/${portalA}/ui/contacts/${inA!.id}`);
    await pull(connectionA);
    await eventually(async () => expect((await contactIn(portalB, GRACE))?.archived).toBe(true));
    const grace = await personByEmail(GRACE);
    expect(grace.deletedIn.map((d) => d.name)).toEqual(['CRM A']);
    // B's own archive comes back as B's delete: flagged likewise, the record kept with no link.
    await pull(connectionB);
    const after = await eventually(async () => {
      const view = await personByEmail(GRACE);
      expect(view.deletedIn.map((d) => d.name)).toEqual(['CRM A', 'CRM B']);
      return view;
    });
    expect(after.id).toBe(grace.id);
    expect(after.sourceLinks).toEqual([]);
    expect(after.fields).toMatchObject({ email: GRACE, firstName: 'Grace', lastName: 'Hopper' });
  });
});
