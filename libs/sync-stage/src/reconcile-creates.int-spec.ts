import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { queueReconcileCreates } from './reconcile-creates';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('reconcile_creates');
  pool = new Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** A workspace with a CRM and the given people's calendars and task lists. */
async function workspace(personal: { provider: string; address: string }[]) {
  const workspaceId = randomUUID();
  await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, 'reconcile']);
  const crm = randomUUID();
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES ($1, $2, 'hubspot', $3, 'live')`,
    [crm, workspaceId, `portal-${crm.slice(0, 8)}`],
  );
  const ids: string[] = [];
  for (const { provider, address } of personal) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status, account_address)
       VALUES ($1, $2, $3::provider, $4, 'live', $4)`,
      [id, workspaceId, provider, address],
    );
    ids.push(id);
  }
  return { workspaceId, crm, ids };
}

async function entity(workspaceId: string, crm: string, type: string, fields: Record<string, unknown>) {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO entity (id, workspace_id, entity_type, fields, heads) VALUES ($1, $2, $3, $4, ARRAY['h1'])`,
    [id, workspaceId, type, JSON.stringify(fields)],
  );
  await pool.query(
    `INSERT INTO source_link (entity_id, connection_id, external_id, entity_type, workspace_id)
     VALUES ($1, $2, $3, $4, $5)`,
    [id, crm, `rec-${id.slice(0, 8)}`, type, workspaceId],
  );
  return id;
}

const creates = async (connectionId: string) =>
  (
    await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM outbox WHERE connection_id = $1 AND op = 'create' ORDER BY entity_id`,
      [connectionId],
    )
  ).rows.map((r) => r.entity_id);

describe('the records a newly reconciled personal connection is owed', () => {
  it("gives each salesperson's calendar only the meetings they organize or attend", async () => {
    const { workspaceId, crm, ids } = await workspace([
      { provider: 'google-calendar', address: 'dana@brightwave.io' },
      { provider: 'microsoft-calendar', address: 'marco@brightwave.io' },
    ]);
    const [dana, marco] = ids as [string, string];
    const hers = await entity(workspaceId, crm, 'meeting', {
      title: 'Demo',
      organizer: 'Dana@Brightwave.io',
      attendees: [{ email: 'bea@acme.example', responseStatus: 'accepted' }],
    });
    const both = await entity(workspaceId, crm, 'meeting', {
      title: 'Review',
      attendees: [{ email: 'marco@brightwave.io' }, { email: 'dana@brightwave.io' }],
    });
    await entity(workspaceId, crm, 'meeting', {
      title: 'Nobody of ours',
      attendees: [{ email: 'x@y.example' }],
    });
    for (const [id, provider] of [
      [dana, 'google-calendar'],
      [marco, 'microsoft-calendar'],
    ] as const)
      await queueReconcileCreates(pool, { id, workspace_id: workspaceId, provider });
    expect(await creates(dana)).toEqual([hers, both].sort());
    expect(await creates(marco)).toEqual([both]);
  });

  it('gives the one calendar and the one task list of a one-salesperson workspace everything, and two task lists nothing', async () => {
    const one = await workspace([
      { provider: 'google-calendar', address: 'dana@brightwave.io' },
      { provider: 'google-tasks', address: 'dana@brightwave.io' },
    ]);
    const meeting = await entity(one.workspaceId, one.crm, 'meeting', { title: 'Booked in the CRM' });
    const task = await entity(one.workspaceId, one.crm, 'task', { title: 'Send the SOW', status: 'open' });
    await queueReconcileCreates(pool, {
      id: one.ids[0]!,
      workspace_id: one.workspaceId,
      provider: 'google-calendar',
    });
    await queueReconcileCreates(pool, {
      id: one.ids[1]!,
      workspace_id: one.workspaceId,
      provider: 'google-tasks',
    });
    expect(await creates(one.ids[0]!)).toEqual([meeting]);
    expect(await creates(one.ids[1]!)).toEqual([task]);

    const two = await workspace([
      { provider: 'google-tasks', address: 'dana@brightwave.io' },
      { provider: 'microsoft-todo', address: 'marco@brightwave.io' },
    ]);
    await entity(two.workspaceId, two.crm, 'task', { title: 'Whose?', status: 'open' });
    for (const [i, provider] of (['google-tasks', 'microsoft-todo'] as const).entries())
      expect(
        await queueReconcileCreates(pool, { id: two.ids[i]!, workspace_id: two.workspaceId, provider }),
      ).toBe(0);
  });
});
