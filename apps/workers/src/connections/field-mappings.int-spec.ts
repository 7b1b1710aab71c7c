import { randomBytes } from 'node:crypto';
import { Client } from '@hubspot/api-client';
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
const CLIENT_SECRET = 'mappings-workers-spec-secret';
const EMAIL = `grace-${randomBytes(3).toString('hex')}@mappings.example`;

interface Contact {
  id: string;
  properties: Record<string, string | null>;
}

/**
 * A field mapping replaced through the API while the workers run (no restart): a custom
 * HubSpot property, created in the emulator's portal, is read into the unified record on the
 * next pull, and a unified edit of the field is written to that property.
 */
describe('field mappings through the workers (API, Postgres, Redis, HubSpot emulator)', () => {
  let t: TestApp;
  let admin: string;
  let workspaceId: string;
  let emulators: RunningEmulators;
  let workers: Workers;
  let pool: Pool;
  let stack: ApiAndWorkers | undefined;
  let connectionId: string;
  const portal = 9_400 + Math.floor(Math.random() * 500);

  const control = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    emulatorControl(emulators.hubspotUrl)<T>(method, path, body);
  const contact = async (): Promise<Contact> => {
    const { results } = await control<{ results: Contact[] }>(
      'GET',
      `/_emulator/hubspot/portals/${portal}/objects/contacts`,
    );
    expect(results).toHaveLength(1);
    return results[0] as Contact;
  };
  const api = async <T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<T>(), text: res.body };
  };
  const person = async () => {
    const { rows } = await pool.query<{ id: string; fields: Record<string, unknown> }>(
      `SELECT id, fields FROM entity WHERE workspace_id = $1 AND entity_type = 'person' AND merged_into IS NULL`,
      [workspaceId],
    );
    expect(rows).toHaveLength(1);
    return rows[0] as { id: string; fields: Record<string, unknown> };
  };
  const pull = () => workers.jobs.enqueue('connection.pull', { connectionId });
  let hubspot: Client;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const grant = await control<{ accessToken: string; refreshToken: string; clientId: string }>(
      'POST',
      '/_emulator/hubspot/portals',
      { portalId: portal, appId: APP_ID, clientSecret: CLIENT_SECRET },
    );
    hubspot = new Client({ accessToken: grant.accessToken, basePath: emulators.hubspotUrl });
    await control('POST', `/_emulator/hubspot/portals/${portal}/ui/contacts`, {
      properties: { email: EMAIL, firstname: 'Grace', lastname: 'Hopper' },
    });
    // The API checks mappings against this portal's properties.
    stack = await startApiAndWorkers({
      label: 'workers_mappings',
      emulators,
      appEnv: { HUBSPOT_API_BASE_URL: emulators.hubspotUrl },
      hubspot: { appId: APP_ID, clientId: grant.clientId, clientSecret: CLIENT_SECRET },
      logLevelVar: 'MAPPINGS_SPEC_LOG_LEVEL',
    });
    ({ t, workers, pool } = stack);
    const seeded = await seedWorkspace(t.prisma, 'Mappings');
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
    expect(created.status).toBe(201);
    connectionId = created.body.id;
  });

  afterAll(async () => {
    if (stack) await stack.stop();
    else await emulators?.close();
  });

  it('backfills to live under the default mappings: the custom property is not read', async () => {
    await eventually(async () => {
      const { rows } = await pool.query<{ status: string }>(
        'SELECT status::text AS status FROM connection WHERE id = $1',
        [connectionId],
      );
      expect(rows[0]?.status).toBe('live');
      expect((await person()).fields).toMatchObject({ firstName: 'Grace', lastName: 'Hopper' });
    });
    await hubspot.crm.properties.coreApi.create('contacts', {
      name: 'lead_score',
      label: 'Lead score',
      type: 'string' as never,
      fieldType: 'text' as never,
      groupName: 'contactinformation',
    });
    const { id } = await contact();
    await control('PATCH', `/_emulator/hubspot/portals/${portal}/ui/contacts/${id}`, {
      properties: { lead_score: 'cold' },
    });
    await pull();
    // The pull sees the edit (the modified date moved) but no mapping names the property yet.
    await eventually(async () => {
      const counts = await workers.jobs
        .queue('pull')
        .getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      expect(Object.values(counts).reduce((x, y) => x + y, 0)).toBe(0);
    });
    expect((await person()).fields).not.toHaveProperty('leadScore');
  });

  it('after a PUT of the mapping, an edit of the property in HubSpot reaches the unified record', async () => {
    const read = await api<{ version: number }>('GET', `/api/v1/connections/${connectionId}/mappings`);
    const replaced = await api<{ version: number }>('PUT', `/api/v1/connections/${connectionId}/mappings`, {
      mappings: [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }],
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.version).toBe(read.body.version + 1);

    const { id } = await contact();
    await control('PATCH', `/_emulator/hubspot/portals/${portal}/ui/contacts/${id}`, {
      properties: { lead_score: 'warm' },
    });
    await pull();
    await eventually(async () => expect((await person()).fields).toMatchObject({ leadScore: 'warm' }));
  });

  it('a unified edit of the field is written to the custom property', async () => {
    const { id } = await person();
    const edited = await api('PATCH', `/api/v1/people/${id}`, { fields: { leadScore: 'hot' } });
    expect(edited.status, edited.text).toBeLessThan(300);
    await eventually(async () => expect((await contact()).properties.lead_score).toBe('hot'));
    // Other fields went on as they were.
    expect((await contact()).properties).toMatchObject({
      firstname: 'Grace',
      lastname: 'Hopper',
      email: EMAIL,
    });
  });
});
