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
import { SYNC_GROUP } from './sync-group';

const APP_ID = 5004;
const CLIENT_SECRET = 'hubspot-merge-workers-spec-secret';
const TAG = randomBytes(3).toString('hex');
const PHONE = '+44 20 7946 0000';
// Two contacts a person made in one portal: the same Ada under two addresses.
const FIRST = {
  email: `ada-${TAG}@analytical.example`,
  firstname: 'Ada',
  lastname: 'Lovelace',
  jobtitle: 'CTO',
};
const SECOND = {
  email: `countess-${TAG}@byron.example`,
  firstname: 'Ada',
  lastname: 'Lovelace',
  phone: PHONE,
};

interface Contact {
  id: string;
  properties: Record<string, string | null>;
}
interface Logged {
  method: string;
  path: string;
  status: number;
}

/**
 * A merge in Syncline of two people who are both HubSpot's own contacts in one portal, through
 * the API and the real workers (sync stage, push jobs, the HubSpot connector and its SDK)
 * against the emulator: HubSpot is asked to merge them once, the portal keeps one contact with
 * the union, a retried merge is done already, and an unmerge gets the restored person a new
 * contact of their own (HubSpot cannot undo a merge) while the survivor's goes back to its own.
 */
describe('a merge of two contacts of one portal, through the workers (API, Postgres, Redis, HubSpot emulator)', () => {
  let t: TestApp;
  let admin: string;
  let workspaceId: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let pool: Pool;
  let stack: ApiAndWorkers | undefined;
  let connectionId: string;
  let first: Contact;
  let second: Contact;
  let survivor: string;
  let absorbed: string;
  let mergeId: string;
  const portal = 9_900 + Math.floor(Math.random() * 90);

  const control = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.hubspotUrl)<T>(method, path, body);
  const contacts = async () =>
    (await control<{ results: Contact[] }>('GET', `/_emulator/hubspot/portals/${portal}/objects/contacts`))
      .results;
  const requests = () => control<Logged[]>('GET', `/_emulator/requests?service=hubspot&account=${portal}`);
  const merges = async () =>
    (await requests()).filter((r) => r.path.startsWith('/crm/v3/objects/contacts/merge'));
  const api = async <T>(method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<T>(), text: res.body, headers: res.headers };
  };
  const entityOf = async (externalId: string) => {
    const { rows } = await pool.query<{ entity_id: string }>(
      'SELECT entity_id::text FROM source_link WHERE connection_id = $1 AND external_id = $2',
      [connectionId, externalId],
    );
    return rows[0]?.entity_id;
  };
  const linksOf = async (entityId: string) =>
    (
      await pool.query<{ external_id: string }>(
        'SELECT external_id FROM source_link WHERE entity_id = $1 AND connection_id = $2 ORDER BY external_id',
        [entityId, connectionId],
      )
    ).rows.map((r) => r.external_id);
  // Nothing left to send, and the log folded: a receipt, and the link it makes, reach the view
  // through the log, so a sent row alone does not mean its link is there yet.
  const settled = () =>
    eventually(async () => {
      const { rows } = await pool.query<{ n: number; behind: number }>(
        `SELECT (SELECT count(*)::int FROM outbox
                  WHERE connection_id = $1 AND status IN ('pending', 'sending')) AS n,
                (SELECT count(*)::int FROM change_event e
                   LEFT JOIN consumer_offset o ON o.group_name = $2 AND o.partition = e.partition
                  WHERE e."offset" > COALESCE(o.committed_offset, -1)) AS behind`,
        [connectionId, SYNC_GROUP],
      );
      expect(rows[0]).toEqual({ n: 0, behind: 0 });
    });
  const deadLetters = async () =>
    (await pool.query<{ error_message: string }>('SELECT error_message FROM dead_letter')).rows;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const grant = await control<{ accessToken: string; refreshToken: string; clientId: string }>(
      'POST',
      '/_emulator/hubspot/portals',
      { portalId: portal, appId: APP_ID, clientSecret: CLIENT_SECRET },
    );
    first = await control<Contact>('POST', `/_emulator/hubspot/portals/${portal}/ui/contacts`, {
      properties: FIRST,
    });
    second = await control<Contact>('POST', `/_emulator/hubspot/portals/${portal}/ui/contacts`, {
      properties: SECOND,
    });
    stack = await startApiAndWorkers({
      label: 'workers_hubspot_merge',
      emulators,
      appEnv: { HUBSPOT_API_BASE_URL: emulators.hubspotUrl },
      hubspot: { appId: APP_ID, clientId: grant.clientId, clientSecret: CLIENT_SECRET },
      logLevelVar: 'HUBSPOT_MERGE_SPEC_LOG_LEVEL',
    });
    ({ t, workers, pool } = stack);
    const seeded = await seedWorkspace(t.prisma, 'Merges');
    admin = seeded.adminKey;
    workspaceId = seeded.workspaceId;
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
    connectionId = created.body.id;
  });

  afterAll(async () => {
    if (stack) await stack.stop();
    else await emulators?.close();
  });

  it('backfills both contacts as two people (another address each: a possible duplicate, never merged silently)', async () => {
    await eventually(async () => {
      const [a, b] = [await entityOf(first.id), await entityOf(second.id)];
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      expect(a).not.toBe(b);
      survivor = a!;
      absorbed = b!;
      const { rows } = await pool.query<{ status: string; reconciled: boolean }>(
        'SELECT status::text AS status, reconciled_at IS NOT NULL AS reconciled FROM connection WHERE id = $1',
        [connectionId],
      );
      expect(rows[0]).toEqual({ status: 'live', reconciled: true });
    });
    await settled();
    expect(await contacts()).toHaveLength(2);
  });

  it('a merge in Syncline is one HubSpot merge: the portal keeps one contact, with the union', async () => {
    const before = (await requests()).length;
    const res = await api<{ id: string }>('POST', `/api/v1/people/${survivor}/merge`, {
      absorbedId: absorbed,
    });
    expect([200, 202], res.text).toContain(res.status);
    mergeId = String(res.headers['operation-id']);
    await eventually(async () => {
      const { rows } = await pool.query<{ status: string }>(
        `SELECT status FROM outbox WHERE connection_id = $1 AND op = 'merge'`,
        [connectionId],
      );
      expect(rows.map((r) => r.status)).toEqual(['sent']);
    });
    await settled();
    expect(await merges()).toEqual([
      expect.objectContaining({ method: 'POST', path: '/crm/v3/objects/contacts/merge', status: 200 }),
    ]);
    const left = await contacts();
    expect(left.map((c) => c.id)).toEqual([first.id]);
    // The kept contact holds the union: A's title, the other's phone and (the later) address.
    expect(left[0]?.properties).toMatchObject({
      firstname: 'Ada',
      lastname: 'Lovelace',
      jobtitle: 'CTO',
      phone: PHONE,
      email: SECOND.email,
      hs_merged_object_ids: second.id,
    });
    // No duplicate write: nothing created, nothing archived, nothing written to the merged-away id.
    const since = (await requests()).slice(before);
    const writes = since.filter(
      (r) => r.method !== 'GET' && !r.path.startsWith('/crm/v3/objects/contacts/batch/read'),
    );
    // The merge first, then the union for the kept contact (batch updates carry their ids in the body).
    const sent = writes.map((r) => `${r.method} ${r.path.split('?')[0]}`);
    expect(sent[0]).toBe('POST /crm/v3/objects/contacts/merge');
    expect(new Set(sent.slice(1))).toEqual(new Set(['POST /crm/v3/objects/contacts/batch/update']));
    expect(since.filter((r) => r.path.includes(second.id))).toEqual([]);
    expect(await linksOf(survivor)).toEqual([first.id]);
    expect(await deadLetters()).toEqual([]);
  });

  it('a retried merge (its first answer lost) is done already: no failure, still one contact', async () => {
    // As if the pusher died after HubSpot merged and before it logged the receipt (one that died
    // after would leave the receipt to mark the row sent): the log folded first, so no receipt
    // is left to fold.
    await eventually(async () => {
      const { rows } = await pool.query<{ behind: number }>(
        `SELECT count(*)::int AS behind FROM change_event e
           LEFT JOIN consumer_offset o ON o.group_name = $1 AND o.partition = e.partition
          WHERE e."offset" > COALESCE(o.committed_offset, -1)`,
        [SYNC_GROUP],
      );
      expect(rows[0]?.behind).toBe(0);
    });
    await pool.query(`UPDATE outbox SET status = 'pending' WHERE connection_id = $1 AND op = 'merge'`, [
      connectionId,
    ]);
    await workers.jobs.enqueue('connection.push', { connectionId, slot: Date.now() });
    await eventually(async () => expect((await merges()).map((r) => r.status)).toEqual([200, 400]));
    await settled();
    const { rows } = await pool.query<{ status: string }>(
      `SELECT status FROM outbox WHERE connection_id = $1 AND op = 'merge'`,
      [connectionId],
    );
    expect(rows.map((r) => r.status)).toEqual(['sent']);
    expect(await deadLetters()).toEqual([]);
    expect((await contacts()).map((c) => c.id)).toEqual([first.id]);
  });

  it('an unmerge: a new contact for the restored person, with its own values; the survivor’s back to its own', async () => {
    const res = await api('POST', `/api/v1/identity-operations/${mergeId}/unmerge`);
    expect([200, 202], res.text).toContain(res.status);
    const made = await eventually(async () => {
      const all = await contacts();
      expect(all).toHaveLength(2);
      const kept = all.find((c) => c.id === first.id);
      const fresh = all.find((c) => c.id !== first.id);
      expect(kept?.properties).toMatchObject({ email: FIRST.email, jobtitle: 'CTO' });
      expect(kept?.properties.phone ?? null).toBeNull();
      expect(fresh?.properties).toMatchObject({ ...SECOND, syncline_id: absorbed });
      expect(fresh?.properties.jobtitle ?? null).toBeNull();
      return fresh!;
    });
    await settled();
    expect(made.id).not.toBe(second.id);
    expect(await linksOf(absorbed)).toEqual([made.id]);
    expect(await linksOf(survivor)).toEqual([first.id]);
    expect((await merges()).length).toBe(2);
    expect(await deadLetters()).toEqual([]);
    const { rows } = await pool.query<{ id: string; merged_into: string | null }>(
      `SELECT id::text, merged_into::text FROM entity WHERE workspace_id = $1 AND entity_type = 'person' ORDER BY id`,
      [workspaceId],
    );
    expect(rows.map((r) => r.merged_into)).toEqual([null, null]);
  });
});
