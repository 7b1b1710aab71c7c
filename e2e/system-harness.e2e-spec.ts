import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { describeDemoWorld, planDemoWorld, seedDemoWorld } from '../scripts/demo-world';
import { TEST_PG_SERVER } from '../test/support/env';
import { type ConnectionView, type SyncSystem, startSystem, waitFor } from './support/system';

// Proves the harness on what exists today: the processes come up, a world is seeded in the
// emulators, a HubSpot portal is connected through the API, the API survives kill -9, and
// stop() leaves nothing behind.

const alive = (pid: number | undefined) => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function databaseExists(name: string): Promise<boolean> {
  const admin = new Client({ connectionString: `${TEST_PG_SERVER}/postgres` });
  await admin.connect();
  try {
    const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rows.length > 0;
  } finally {
    await admin.end();
  }
}

describe('the system harness', () => {
  let system: SyncSystem | undefined;
  afterAll(async () => {
    await system?.stop();
  });

  it('starts, seeds, connects, survives kill -9 of the API, and stops clean', async ({ onTestFailed }) => {
    onTestFailed(() => system?.dumpLogs('system output of the failed test'));
    // The workers are started by the next test: this one needs only the API and the emulators.
    system = await startSystem({ label: 'harness', workers: 0 });
    const s = system;
    expect(s.processes().map((p) => [p.name, p.running])).toEqual([
      ['emulators', true],
      ['api', true],
    ]);
    expect((await s.api('GET', '/readyz', undefined, { key: null })).status).toBe(200);

    const world = await seedDemoWorld(s.emulator.urls, { seed: 7, people: 24, app: s.hubspotApp });
    // The same seed, the same world (content, not the emulators' ids).
    const again = planDemoWorld({ seed: 7, people: 24 });
    expect(world.people).toEqual(again.people);
    expect(world.portals.a.counts.contacts).toBe(world.counts.onlyA + world.counts.inBoth);
    const contactsA = await s.emulator.hubspot.objects(world.portals.a.portalId, 'contacts');
    expect(contactsA).toHaveLength(world.portals.a.counts.contacts);
    expect(world.duplicates.some((d) => d.kind === 'contact')).toBe(true);
    expect(world.conflicts.length).toBeGreaterThan(0);
    expect(world.conflicts.every((c) => c.applied && c.edits.length === 2)).toBe(true);
    expect((await s.emulator.google.calendar.list(world.google.email)).length).toBe(world.counts.events);
    if (process.env.SYNCLINE_E2E_VERBOSE === '1') console.log(describeDemoWorld(world).join('\n'));

    const { a } = world.portals;
    const connection = await s.connect('hubspot', a.externalAccountId, a.credentials, {
      displayName: a.label,
    });
    expect(connection).toMatchObject({
      provider: 'hubspot',
      externalAccountId: String(a.portalId),
      hasCredentials: true,
    });
    const fetched = await s.api<ConnectionView>('GET', `/api/v1/connections/${connection.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject({ id: connection.id, provider: 'hubspot', displayName: 'CRM A' });
    expect(JSON.stringify(fetched.body)).not.toContain(a.credentials.refreshToken);

    // kill -9 the API; it no longer answers; restarted on the same port, it does again.
    const before = s.process('api').pid;
    await s.kill('api', 'SIGKILL');
    expect(s.process('api').running).toBe(false);
    expect(alive(before)).toBe(false);
    await expect(fetch(`${s.urls.api}/healthz`)).rejects.toThrow();
    const restarted = await s.restart('api');
    expect(restarted.pid).not.toBe(before);
    const afterRestart = await waitFor(
      () => s.api<ConnectionView>('GET', `/api/v1/connections/${connection.id}`),
      {
        describe: 'the restarted API to serve the connection',
        until: (res) => res.status === 200,
        timeoutMs: 10_000,
      },
    );
    expect(afterRestart.body.id).toBe(connection.id);

    // stop(): no process left, database dropped.
    const pids = s.processes().map((p) => p.pid);
    const dbName = s.database.name;
    expect(await databaseExists(dbName)).toBe(true);
    await s.stop();
    system = undefined;
    expect(pids.filter(alive)).toEqual([]);
    expect(await databaseExists(dbName)).toBe(false);
  });

  it('runs workers processes: a second one beside the first, kill -9 and restart', async ({
    onTestFailed,
  }) => {
    onTestFailed(() => system?.dumpLogs('system output of the failed test'));
    system = await startSystem({ label: 'harness_workers', workers: 1 });
    const s = system;
    const second = await s.startWorkers();
    expect(second.name).toBe('workers-2');
    expect(s.processes().filter((p) => p.kind === 'workers' && p.running)).toHaveLength(2);
    const before = s.process('workers').pid;
    await s.kill('workers', 'SIGKILL');
    expect(alive(before)).toBe(false);
    expect(s.process('workers-2').running).toBe(true);
    const restarted = await s.restart('workers');
    expect(restarted.running).toBe(true);
    expect(restarted.pid).not.toBe(before);
    const pids = s.processes().map((p) => p.pid);
    await s.stop({ graceful: true });
    system = undefined;
    expect(pids.filter(alive)).toEqual([]);
  });
});
