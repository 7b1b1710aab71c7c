import { ChangeLog } from '@syncline/log';
import { writeReceiptChange } from '@syncline/sync-stage';
import { contactEvent, seedConnections, syncStage } from '@syncline/sync-stage/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { claimOutbox } from './outbox-claim';

/**
 * The push's claim against real Postgres and the real sync stage: what a pusher takes is
 * what the target is owed at the entity's current state, never a row a later merge replaced,
 * whatever the pusher was doing while that merge committed.
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('outbox_claim');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const t0 = Date.now() - 120_000;
const at = (s: number) => new Date(t0 + s * 1000);
const ada = { email: 'ada@analytical.example', firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'Analyst' };

const rowsOf = async (connectionId: string) =>
  (
    await pool.query<{ id: string; status: string; fields: Record<string, unknown> }>(
      'SELECT id::text, status, fields FROM outbox WHERE connection_id = $1 ORDER BY id',
      [connectionId],
    )
  ).rows;

/** Ada in CRM A and CRM B, linked as one person, both CRMs holding the same values. */
async function adaInBothCrms(policy?: 'manual') {
  const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
  if (policy)
    await pool.query(
      `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
       VALUES ($1, 'person', jsonb_build_object('jobTitle', jsonb_build_object('kind', $2::text)), 1)`,
      [ws.workspaceId, policy],
    );
  const { handle } = syncStage(pool);
  await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), ada));
  await handle({ ...contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), ada), providerVersion: 'v1' });
  return { ws, handle };
}

describe('claiming outbox rows', () => {
  it('never hands out an update computed before a merge of the target’s own report, even one a dead pusher held', async () => {
    const { ws, handle } = await adaInBothCrms('manual');
    // A edits the title: B is owed it.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ada, jobTitle: 'Professor' }));
    const owed = await rowsOf(ws.b);
    expect(owed.map((r) => [r.status, r.fields])).toEqual([['pending', { jobTitle: 'Professor' }]]);
    // A pusher claims it, and dies before sending (its claim stays `sending`)…
    const first = await claimOutbox(pool, ws.b, 500);
    expect(first.rows.map((r) => r.id)).toEqual([owed[0]!.id]);
    expect(first.versions.get(first.rows[0]!.entity_id)).toBe('v1');
    // …while B's own edit of the title, made without seeing A's, is merged: an open conflict
    // under `manual`, and the link takes B's new version.
    await handle({
      ...contactEvent(ws.workspaceId, ws.b, 'b-1', at(11), { ...ada, jobTitle: 'Enchantress of Numbers' }),
      providerVersion: 'v2',
    });
    const { rows: open } = await pool.query(
      `SELECT field FROM merge_conflict WHERE workspace_id = $1 AND status = 'open'`,
      [ws.workspaceId],
    );
    expect(open).toEqual([{ field: 'jobTitle' }]);
    // The merge set aside only what was pending: the dead pusher's row is still claimed.
    expect((await rowsOf(ws.b)).map((r) => r.status)).toEqual(['sending']);

    // The next pusher takes back the dead one's rows: this one is out of date (sent at B's new
    // version it would overwrite B's side of the open conflict), so it is set aside.
    const next = await claimOutbox(pool, ws.b, 500);
    expect(next.rows).toEqual([]);
    expect(next.outdated).toBe(1);
    expect((await rowsOf(ws.b)).map((r) => r.status)).toEqual(['superseded']);
    // Neither CRM is owed the title while the conflict is open.
    const { rows: pending } = await pool.query(
      `SELECT connection_id FROM outbox WHERE workspace_id = $1 AND status IN ('pending', 'sending')`,
      [ws.workspaceId],
    );
    expect(pending).toEqual([]);
  });

  it('hands out what is owed at the current heads, with the version merged with them', async () => {
    const { ws, handle } = await adaInBothCrms();
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ada, jobTitle: 'Professor' }));
    // B reports an edit of another field: the title is still owed, now at newer heads.
    await handle({
      ...contactEvent(ws.workspaceId, ws.b, 'b-1', at(11), { ...ada, phone: '+44 20 7946 0018' }),
      providerVersion: 'v2',
    });
    const claim = await claimOutbox(pool, ws.b, 500);
    expect(claim.outdated).toBe(0);
    expect(claim.rows.map((r) => r.fields)).toEqual([{ jobTitle: 'Professor' }]);
    expect(claim.versions.get(claim.rows[0]!.entity_id)).toBe('v2');
    const { rows: heads } = await pool.query<{ same: boolean }>(
      'SELECT o.heads = e.heads AS same FROM outbox o JOIN entity e ON e.id = o.entity_id WHERE o.id = $1',
      [claim.rows[0]!.id],
    );
    expect(heads).toEqual([{ same: true }]);
    // A create keeps its one row per target whatever the heads: it is never set aside here.
    await pool.query(
      `UPDATE outbox SET status = 'pending', claimed_at = NULL, op = 'create', heads = '{x}' WHERE id = $1`,
      [claim.rows[0]!.id],
    );
    const again = await claimOutbox(pool, ws.b, 500);
    expect(again.outdated).toBe(0);
    expect(again.rows.map((r) => r.op)).toEqual(['create']);
  });

  it('takes no row queued after the outbox as the push found it (upTo), which the next push takes', async () => {
    const { ws, handle } = await adaInBothCrms();
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ada, jobTitle: 'Professor' }));
    const { rows: found } = await pool.query<{ id: string }>('SELECT max(id)::text AS id FROM outbox');
    // A edits again after the push began: the pending row is replaced by one the push did not find.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(11), { ...ada, jobTitle: 'Countess' }));
    const bounded = await claimOutbox(pool, ws.b, 500, undefined, found[0]!.id);
    expect(bounded.rows).toEqual([]);
    const next = await claimOutbox(pool, ws.b, 500);
    expect(next.rows.map((r) => r.fields)).toEqual([{ jobTitle: 'Countess' }]);
    expect(BigInt(next.rows[0]!.id)).toBeGreaterThan(BigInt(found[0]!.id));
  });

  it('waits a second longer after each refusal before taking a write the provider refused as stale again', async () => {
    const { ws, handle } = await adaInBothCrms();
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(20), { ...ada, jobTitle: 'Countess' }));
    const [owed] = await rowsOf(ws.b);
    expect(owed?.status).toBe('pending');
    // Refused as stale on its third attempt, as PushService.setAside leaves it: pending, stamped.
    await pool.query(
      `UPDATE outbox SET attempts = 3, claimed_at = now(), last_error = 'Conflict: changed since' WHERE id = $1`,
      [owed!.id],
    );
    expect((await claimOutbox(pool, ws.b, 500)).rows).toEqual([]);
    // Three seconds on (its wait after three refusals), it is taken again.
    await pool.query(`UPDATE outbox SET claimed_at = now() - interval '3.5 seconds' WHERE id = $1`, [
      owed!.id,
    ]);
    expect((await claimOutbox(pool, ws.b, 500)).rows.map((r) => r.id)).toEqual([owed!.id]);
  });

  it('makes the next write conditional on the version our last write left while its receipt waits on the log', async () => {
    const { ws, handle } = await adaInBothCrms();
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(30), { ...ada, jobTitle: 'Countess' }));
    const first = await claimOutbox(pool, ws.b, 500);
    expect(first.versions.get(first.rows[0]!.entity_id)).toBe('v1');
    // Sent: HubSpot answered with version v2, and the receipt went on the log, not folded yet.
    const sent = first.rows[0]!;
    const log = new ChangeLog(pool, { partitions: 1 });
    await log.init();
    const appended = await log.append([
      writeReceiptChange(
        { workspaceId: ws.workspaceId, connectionId: ws.b, entityType: 'person', externalId: 'b-1' },
        {
          idempotencyKey: sent.idempotency_key,
          entityId: sent.entity_id,
          op: 'update',
          fields: sent.fields,
          prior: sent.prior,
          heads: sent.heads,
          contentHash: 'h',
          sentAt: at(31).toISOString(),
        },
        'v2',
      ),
    ]);
    await log.close();
    expect(appended.ok).toBe(true);
    await pool.query(`UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = $1`, [sent.id]);
    // A edits again before the sync stage folds the receipt: the write is conditional on v2.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(32), { ...ada, jobTitle: 'Professor' }));
    const second = await claimOutbox(pool, ws.b, 500);
    expect(second.rows.map((r) => r.fields)).toEqual([{ jobTitle: 'Professor' }]);
    expect(second.versions.get(sent.entity_id)).toBe('v2');
    // Once the stage has folded it, the link is what counts (here a later report's version).
    const { rows: at0 } = await pool.query<{ offset: string }>(
      `SELECT "offset"::text AS offset FROM change_event WHERE connection_id = $1 AND op = 'receipt'`,
      [ws.b],
    );
    await pool.query(
      `INSERT INTO consumer_offset (group_name, partition, committed_offset) VALUES ('sync', 0, $1)
       ON CONFLICT (group_name, partition) DO UPDATE SET committed_offset = EXCLUDED.committed_offset`,
      [at0[0]!.offset],
    );
    await pool.query(`UPDATE source_link SET provider_version = 'v3' WHERE connection_id = $1`, [ws.b]);
    await pool.query(`UPDATE outbox SET status = 'pending', claimed_at = NULL WHERE id = $1`, [
      second.rows[0]!.id,
    ]);
    const third = await claimOutbox(pool, ws.b, 500);
    expect(third.versions.get(sent.entity_id)).toBe('v3');
  });

  it('hands out a record’s insight properties at most once per period, and nothing before its time', async () => {
    const ws = await seedConnections(pool, { crm: 'hubspot' });
    const { handle } = syncStage(pool);
    await handle(contactEvent(ws.workspaceId, ws.crm, 'c-1', at(0), ada));
    const { rows } = await pool.query<{ entity_id: string }>(
      `SELECT entity_id FROM source_link WHERE connection_id = $1`,
      [ws.crm],
    );
    const entityId = rows[0]!.entity_id;
    const insights = async (key: string, status: string, extra: string) =>
      (
        await pool.query<{ id: string }>(
          `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads,
                               idempotency_key, status, sent_at, not_before)
           SELECT $1, $2, 'person', $3, 'insights', 'c-1', '{"trend":"cold"}', '{}', $4, $5, ${extra}
           RETURNING id::text`,
          [ws.workspaceId, entityId, ws.crm, key, status],
        )
      ).rows[0]!.id;
    const claimed = async (periodMs: number) =>
      (await claimOutbox(pool, ws.crm, 500, periodMs)).rows
        .filter((r) => r.op === 'insights')
        .map((r) => r.id);

    // Written five seconds ago: the next waits for a 30-second period to pass, not for a 4-second one.
    await insights('insights:sent', 'sent', `now() - interval '5 seconds', NULL`);
    const next = await insights('insights:next', 'pending', 'NULL, NULL');
    expect(await claimed(30_000)).toEqual([]);
    expect(await claimed(4_000)).toEqual([next]);
    await pool.query(`UPDATE outbox SET status = 'sent', sent_at = now() WHERE id = $1`, [next]);

    // One not due yet (its not_before ahead) is left, whatever the period.
    const later = await insights('insights:later', 'pending', `NULL, now() + interval '1 minute'`);
    expect(await claimed(0)).toEqual([]);
    await pool.query(`UPDATE outbox SET not_before = now() - interval '1 second' WHERE id = $1`, [later]);
    expect(await claimed(0)).toEqual([later]);
  });
});
