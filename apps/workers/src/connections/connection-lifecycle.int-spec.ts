import { randomBytes } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { ChangeLog } from '@syncline/log';
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

const APP_ID = 5002;
const CLIENT_SECRET = 'lifecycle-spec-secret';
const EMAIL = `ada-${randomBytes(3).toString('hex')}@lifecycle.example`;
/** The workers' outbox sweep period (outbox-sweep.scheduler.ts), which would send a paused connection's rows. */
const SWEEP_MS = 5_000;

interface Contact {
  id: string;
  properties: Record<string, string | null>;
}

/**
 * Pause, resume, resync and disconnect through the real API, acted on by the real workers
 * (pull, merge, push) against the HubSpot emulator: two portals in one workspace that know
 * the same person.
 */
describe('connection lifecycle through the workers (API, Postgres, Redis, emulators)', () => {
  let t: TestApp;
  let admin: string;
  let workspaceId: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let pool: Pool;
  let stack: ApiAndWorkers | undefined;
  const portalA = 8_900 + Math.floor(Math.random() * 500);
  const portalB = portalA + 500;
  let connectionA: string;
  let connectionB: string;

  const control = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.hubspotUrl)<T>(method, path, body);
  const contactIn = async (portal: number): Promise<Contact> => {
    const { results } = await control<{ results: Contact[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portal}/objects/contacts`,
    );
    expect(results).toHaveLength(1);
    return results[0] as Contact;
  };
  const editInUi = async (portal: number, properties: Record<string, string>) => {
    const { id } = await contactIn(portal);
    await control('PATCH', `/_emulator/hubspot/portals/${portal}/ui/contacts/${id}`, { properties });
  };
  /** Data-plane calls the workers made to a portal (pulls and pushes alike). */
  const requestsTo = async (portal: number): Promise<number> =>
    (await control<unknown[]>('GET', `/_emulator/requests?service=hubspot&account=${portal}`)).length;

  const api = async <T>(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<T>() };
  };
  const connection = async (id: string) =>
    (
      await pool.query<{ status: string; cursors: object; backfill_seen: number }>(
        'SELECT status::text AS status, cursors, backfill_seen FROM connection WHERE id = $1',
        [id],
      )
    ).rows[0];
  const count = async (sql: string, ...values: unknown[]): Promise<number> =>
    (await pool.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;
  const person = async () =>
    (
      await pool.query<{ id: string; fields: Record<string, unknown> }>(
        `SELECT id, fields FROM entity WHERE workspace_id = $1 AND entity_type = 'person' AND merged_into IS NULL`,
        [workspaceId],
      )
    ).rows;
  const outboxOf = async (connectionId: string) =>
    (
      await pool.query<{ status: string; fields: Record<string, unknown> }>(
        'SELECT status, fields FROM outbox WHERE connection_id = $1 ORDER BY id',
        [connectionId],
      )
    ).rows;
  const eventsOf = async (connectionId: string) =>
    (
      await pool.query<{ fields: Record<string, unknown> }>(
        'SELECT fields FROM change_event WHERE connection_id = $1 ORDER BY "offset"',
        [connectionId],
      )
    ).rows.map((r) => JSON.stringify(r.fields));
  const pull = (connectionId: string) => workers.jobs.enqueue('connection.pull', { connectionId });

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
          `SELECT count(*)::int AS n FROM outbox o JOIN connection c ON c.id = o.connection_id
            WHERE o.workspace_id = $1 AND o.status IN ('pending', 'sending') AND c.status IN ('live', 'backfilling')`,
          workspaceId,
        ),
      ).toBe(0);
    });

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const grants: Record<number, { accessToken: string; refreshToken: string; clientId: string }> = {};
    for (const portal of [portalA, portalB]) {
      grants[portal] = await control('POST', '/_emulator/hubspot/portals', {
        portalId: portal,
        appId: APP_ID,
        clientSecret: CLIENT_SECRET,
      });
      await control('POST', `/_emulator/hubspot/portals/${portal}/ui/contacts`, {
        properties: { email: EMAIL, firstname: 'Ada', lastname: 'Lovelace' },
      });
    }
    stack = await startApiAndWorkers({
      label: 'workers_lifecycle',
      emulators,
      hubspot: { appId: APP_ID, clientId: grants[portalA]?.clientId, clientSecret: CLIENT_SECRET },
      logLevelVar: 'LIFECYCLE_SPEC_LOG_LEVEL',
    });
    ({ t, workers, pool } = stack);
    const seeded = await seedWorkspace(t.prisma, 'Lifecycle');
    admin = seeded.adminKey;
    workspaceId = seeded.workspaceId;
    const connect = async (portal: number) => {
      const grant = grants[portal];
      const res = await api<{ id: string }>('POST', '/api/v1/connections', {
        provider: 'hubspot',
        externalAccountId: String(portal),
        credentials: {
          accessToken: grant?.accessToken,
          refreshToken: grant?.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
      });
      expect(res.status).toBe(201);
      return res.body.id;
    };
    connectionA = await connect(portalA);
    connectionB = await connect(portalB);
  });

  afterAll(async () => {
    if (stack) await stack.stop();
    else await emulators?.close();
  });

  it('both portals backfill to live and their person becomes one record', async () => {
    await eventually(async () => {
      expect((await connection(connectionA))?.status).toBe('live');
      expect((await connection(connectionB))?.status).toBe('live');
    });
    await settled();
    const [one, ...more] = await person();
    expect(more).toEqual([]);
    expect(one?.fields).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(await count('SELECT count(*)::int AS n FROM source_link WHERE entity_id = $1', one?.id)).toBe(2);
  });

  let requestsWhenPaused: number;

  it('a paused connection is neither pulled nor pushed: its cursor stays and the writes it is owed wait', async () => {
    const paused = await api<{ status: string }>('POST', `/api/v1/connections/${connectionB}/pause`);
    expect(paused).toMatchObject({ status: 200, body: { status: 'paused' } });
    const cursors = (await connection(connectionB))?.cursors;
    requestsWhenPaused = await requestsTo(portalB);
    const eventsBefore = (await eventsOf(connectionB)).length;

    await editInUi(portalA, { jobtitle: 'VP Paused' });
    await editInUi(portalB, { lastname: 'Paused-Edit' });
    await pull(connectionA);
    await pull(connectionB);
    // A's edit is merged and owed to B, where it waits.
    await eventually(async () => {
      expect(await outboxOf(connectionB)).toContainEqual({
        status: 'pending',
        fields: { jobTitle: 'VP Paused' },
      });
    });
    // Longer than the outbox sweep, which pushes every live connection's pending rows.
    await new Promise((r) => setTimeout(r, SWEEP_MS + 1_500));
    await eventually(async () => {
      const counts = await workers.jobs.queue('pull').getJobCounts('waiting', 'active', 'delayed');
      expect(Object.values(counts).reduce((x, y) => x + y, 0)).toBe(0);
    });

    expect(await requestsTo(portalB)).toBe(requestsWhenPaused);
    expect((await contactIn(portalB)).properties.jobtitle ?? null).toBeNull();
    expect(await outboxOf(connectionB)).toContainEqual({
      status: 'pending',
      fields: { jobTitle: 'VP Paused' },
    });
    expect(await connection(connectionB)).toMatchObject({ status: 'paused', cursors });
    expect(await eventsOf(connectionB)).toHaveLength(eventsBefore);
    // A keeps syncing meanwhile.
    expect((await person())[0]?.fields).toMatchObject({ jobTitle: 'VP Paused', lastName: 'Lovelace' });
  });

  it('resume catches up from the kept cursor and sends what waited, both ways', async () => {
    const resumed = await api<{ status: string }>('POST', `/api/v1/connections/${connectionB}/resume`);
    expect(resumed).toMatchObject({ status: 200, body: { status: 'live' } });
    // The API queued the pull; nothing else asks for one here.
    await eventually(async () => {
      expect((await eventsOf(connectionB)).some((e) => e.includes('Paused-Edit'))).toBe(true);
      expect((await contactIn(portalB)).properties.jobtitle).toBe('VP Paused');
      expect((await contactIn(portalA)).properties.lastname).toBe('Paused-Edit');
    });
    await settled();
    expect(await requestsTo(portalB)).toBeGreaterThan(requestsWhenPaused);
    expect((await person())[0]?.fields).toMatchObject({ jobTitle: 'VP Paused', lastName: 'Paused-Edit' });
    expect((await outboxOf(connectionB)).filter((r) => r.status === 'pending')).toEqual([]);
  });

  it('a resync reads the portal again from scratch without duplicating anything', async () => {
    const linksBefore = await count(
      'SELECT count(*)::int AS n FROM source_link WHERE connection_id = $1',
      connectionA,
    );
    const resynced = await api<{ status: string }>('POST', `/api/v1/connections/${connectionA}/resync`);
    expect(resynced).toMatchObject({ status: 200, body: { status: 'backfilling' } });
    await eventually(async () => {
      const current = await connection(connectionA);
      expect(current?.status).toBe('live');
      expect(current?.backfill_seen).toBe(1);
    });
    await settled();
    expect(await person()).toHaveLength(1);
    expect(
      await count('SELECT count(*)::int AS n FROM source_link WHERE connection_id = $1', connectionA),
    ).toBe(linksBefore);
    for (const portal of [portalA, portalB]) await contactIn(portal);
  });

  it('a disconnected connection is written to never again, and its late events link nothing', async () => {
    const gone = await api<{ status: string }>('DELETE', `/api/v1/connections/${connectionB}?data=keep`);
    expect(gone).toMatchObject({ status: 200, body: { status: 'disconnected' } });
    const requestsWhenGone = await requestsTo(portalB);

    await editInUi(portalA, { jobtitle: 'After Disconnect' });
    await pull(connectionA);
    await eventually(async () => {
      expect((await person())[0]?.fields).toMatchObject({ jobTitle: 'After Disconnect' });
    });
    // A change of B appended after the disconnect (a page of a pull that was running then).
    const log = new ChangeLog(pool, { partitions: t.config.LOG_PARTITIONS });
    try {
      await log.init();
      const appended = await log.append([
        {
          workspaceId,
          connectionId: connectionB,
          entityType: 'person',
          externalId: 'late-1',
          op: 'upsert',
          eventKey: 'late-1:1',
          eventTime: new Date(),
          fields: { email: 'late@lifecycle.example', firstName: 'Late' },
        },
      ]);
      expect(appended.ok).toBe(true);
    } finally {
      await log.close();
    }
    await new Promise((r) => setTimeout(r, SWEEP_MS + 500));
    await settled();

    expect(
      await count('SELECT count(*)::int AS n FROM source_link WHERE connection_id = $1', connectionB),
    ).toBe(0);
    expect(await person()).toHaveLength(1);
    expect(await requestsTo(portalB)).toBe(requestsWhenGone);
    expect((await contactIn(portalB)).properties.jobtitle).toBe('VP Paused');
    expect(
      (await outboxOf(connectionB)).filter((r) => r.status === 'pending' || r.status === 'sending'),
    ).toEqual([]);
  });
});
