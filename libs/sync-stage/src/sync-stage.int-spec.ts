import { randomUUID } from 'node:crypto';
import { inTransaction } from '@syncline/core';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import type { OutboxRow } from './outbox/outbox-row';
import {
  claimPush,
  contactEvent,
  logEventOf,
  playPush,
  receiptOf,
  seedConnections,
  syncStage,
} from './testing/sync-stage';
import { foldWriteEvents } from './write-events';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('sync_stage');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Plays the push stage: the outbox rows owed to a connection are "sent" and leave receipts. */
const sendOwed = async (connectionId: string, sentAt: Date) =>
  (await playPush(pool, connectionId, sentAt)).map((r) => r.fields);

async function entityFields(connectionId: string, externalId: string) {
  const { rows } = await pool.query<{ fields: Record<string, unknown> }>(
    `SELECT e.fields FROM entity e JOIN source_link l ON l.entity_id = e.id
      WHERE l.connection_id = $1 AND l.external_id = $2`,
    [connectionId, externalId],
  );
  return rows[0]?.fields;
}

async function pendingFor(connectionId: string) {
  const { rows } = await pool.query<{ fields: Record<string, unknown> }>(
    `SELECT fields FROM outbox WHERE connection_id = $1 AND status = 'pending'`,
    [connectionId],
  );
  return rows.map((r) => r.fields);
}

describe('the sync stage and write receipts', () => {
  it('a report of the record from before our write is no clear of what we wrote', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const ada = { email: 'ada@analytical.example', firstName: 'Ada', lifecycleStage: null };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), ada));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), ada));
    // A sets the stage at 10 s; we write it to B at 12 s.
    await handle(
      contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ada, lifecycleStage: 'opportunity' }),
    );
    expect(await sendOwed(ws.b, at(12))).toEqual([{ lifecycleStage: 'opportunity' }]);
    // B's own edit at 11 s (before our write) arrives afterwards, as a full record without the stage.
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(11), { ...ada, firstName: 'Augusta' }));
    expect(await entityFields(ws.b, 'b-1')).toMatchObject({
      firstName: 'Augusta',
      lifecycleStage: 'opportunity',
    });
    // B holds the stage (we wrote it): B is owed nothing, A is owed B's edit.
    expect(await pendingFor(ws.b)).toEqual([]);
    expect(await pendingFor(ws.a)).toEqual([{ firstName: 'Augusta' }]);
  });

  it("a read of the source's own past, merged after its later edit, owes it nothing and moves no version back", async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const version = (s: number) => at(s).toISOString();
    const cy = { email: 'cy@acme.example', firstName: 'Cy', jobTitle: 'Analyst' };
    const full = (s: number, fields: Record<string, unknown>) => ({
      ...contactEvent(ws.workspaceId, ws.a, 'a-9', at(s), fields),
      providerVersion: version(s),
    });
    await handle(full(0, cy));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-9', at(1), cy));
    await sendOwed(ws.b, at(2));
    // A's edit at 30 s arrives as a notification; a full read taken at 20 s lands after it.
    await handle({
      ...contactEvent(ws.workspaceId, ws.a, 'a-9', at(30), { jobTitle: 'CTO' }),
      eventKey: 'a-9:notification:30',
    });
    await handle(full(20, { ...cy, jobTitle: 'Lead Analyst' }));
    expect(await entityFields(ws.a, 'a-9')).toMatchObject({ jobTitle: 'CTO' });
    expect(await pendingFor(ws.a)).toEqual([]);
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'CTO' }]);

    const linkVersion = async () =>
      (
        await pool.query<{ v: string }>(
          `SELECT provider_version AS v FROM source_link WHERE connection_id = $1 AND external_id = 'a-9'`,
          [ws.a],
        )
      ).rows[0]?.v;
    expect(await linkVersion()).toBe(version(20));
    // A newer version (our write's receipt, say) is not moved back by an older read ...
    await pool.query(
      `UPDATE source_link SET provider_version = $2 WHERE connection_id = $1 AND external_id = 'a-9'`,
      [ws.a, version(40)],
    );
    await handle(full(35, { ...cy, jobTitle: 'CTO' }));
    expect(await linkVersion()).toBe(version(40));
    // ... and a later one takes its place.
    await handle(full(50, { ...cy, jobTitle: 'CTO' }));
    expect(await linkVersion()).toBe(version(50));
  });

  it('an edit our later write replaced wins by its time, and the source is owed it again', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const bo = { email: 'bo@acme.example', firstName: 'Bo', jobTitle: 'Analyst' };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-2', at(0), bo));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-2', at(1), bo));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-2', at(10), { ...bo, jobTitle: 'CTO' }));
    expect(await sendOwed(ws.b, at(13))).toEqual([{ jobTitle: 'CTO' }]);
    // The write knew what B held before it.
    const { rows: prior } = await pool.query('SELECT prior FROM write_receipt WHERE connection_id = $1', [
      ws.b,
    ]);
    expect(prior.map((r) => r.prior)).toEqual([{ jobTitle: 'Analyst' }]);
    // B's whole record as read at 12 s, before our write: its title is the old state, no edit.
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-2', at(12), { ...bo, jobTitle: 'Analyst' }));
    expect(await entityFields(ws.b, 'b-2')).toMatchObject({ jobTitle: 'CTO' });
    expect(await pendingFor(ws.b)).toEqual([]);
    // B's edit at 12 s, dated by the provider (a property-change notification): our write at
    // 13 s replaced it in B, so B holds CTO; the later edit wins and is owed everywhere.
    await handle({
      ...contactEvent(ws.workspaceId, ws.b, 'b-2', at(12), { jobTitle: 'CEO' }),
      eventKey: 'contacts:b-2:12000:jobtitle',
      fieldTimes: { jobTitle: at(12).toISOString() },
    });
    expect(await entityFields(ws.b, 'b-2')).toMatchObject({ jobTitle: 'CEO' });
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'CEO' }]);
    expect(await pendingFor(ws.a)).toEqual([{ jobTitle: 'CEO' }]);
  });

  it('a report after our write applies the receipt: our values are its echo, no write owed', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const cy = { email: 'cy@globex.example', firstName: 'Cy', phone: null };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-3', at(0), { ...cy, phone: '+1 415 555 0100' }));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-3', at(1), cy));
    expect(await sendOwed(ws.b, at(5))).toEqual([{ phone: '+1 415 555 0100' }]);
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-3', at(6), { ...cy, phone: '+1 415 555 0100' }));
    expect(await pendingFor(ws.a)).toEqual([]);
    expect(await pendingFor(ws.b)).toEqual([]);
    const { rows } = await pool.query('SELECT applied_at FROM write_receipt WHERE connection_id = $1', [
      ws.b,
    ]);
    expect(rows.map((r) => r.applied_at !== null)).toEqual([true]);
  });

  it("a re-read of what the view holds and our write's echo leave the view alone: same version, no announcement", async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const eve = { email: 'eve@umbrella.example', firstName: 'Eve', jobTitle: 'Analyst' };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-5', at(0), eve));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-5', at(1), eve));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-5', at(10), { ...eve, jobTitle: 'Lead' }));
    const view = async () =>
      (
        await pool.query<{ version: string; fields: Record<string, unknown>; updated_at: Date }>(
          `SELECT e.version::text AS version, e.fields, e.updated_at FROM entity e
             JOIN source_link l ON l.entity_id = e.id WHERE l.connection_id = $1 AND l.external_id = 'a-5'`,
          [ws.a],
        )
      ).rows[0]!;
    const before = await view();
    expect(before.fields).toMatchObject({ jobTitle: 'Lead' });
    expect(await sendOwed(ws.b, at(12))).toEqual([{ jobTitle: 'Lead' }]);
    const listener = await pool.connect();
    const announced: string[] = [];
    try {
      listener.on('notification', (n) => announced.push(n.payload ?? ''));
      await listener.query('LISTEN syncline_entity');
      // A pull reading A's record as it is (already merged from the webhook), and B's echo of our write.
      await handle({
        ...contactEvent(ws.workspaceId, ws.a, 'a-5', at(10), { ...eve, jobTitle: 'Lead' }),
        eventKey: 'contacts:a-5:10000',
      });
      await handle(contactEvent(ws.workspaceId, ws.b, 'b-5', at(13), { ...eve, jobTitle: 'Lead' }));
      await listener.query('SELECT 1');
      expect(await view()).toEqual(before);
      expect(announced).toEqual([]);
      expect(await pendingFor(ws.a)).toEqual([]);
      expect(await pendingFor(ws.b)).toEqual([]);
      // A real change is saved and announced as before.
      await handle(contactEvent(ws.workspaceId, ws.b, 'b-5', at(20), { ...eve, jobTitle: 'Director' }));
      await listener.query('SELECT 1');
      const after = await view();
      expect(after.fields).toMatchObject({ jobTitle: 'Director' });
      expect(Number(after.version)).toBeGreaterThan(Number(before.version));
      expect(announced).toHaveLength(1);
    } finally {
      listener.release();
    }
  });

  it('an echo that overtakes its receipt is still our echo: a later edit made elsewhere wins, nobody is written the old value', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const di = { email: 'di@initech.example', firstName: 'Di', jobTitle: 'Analyst' };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-4', at(0), di));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-4', at(1), di));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-4', at(10), { ...di, jobTitle: 'Lead' }));
    // A pusher takes B's write at 12 s; B applies it at 12.5 s and notifies at once, and the
    // notification is merged before the pusher has stored the receipt.
    expect(await claimPush(pool, ws.b, at(12))).toBe(1);
    await handle({
      ...contactEvent(ws.workspaceId, ws.b, 'b-4', at(12.5), { jobTitle: 'Lead' }),
      eventKey: 'contacts:b-4:12500:jobtitle',
      fieldTimes: { jobTitle: at(12.5).toISOString() },
    });
    // Meanwhile A's user had changed the title again (12.2 s): it arrives after B's echo.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-4', at(12.2), { ...di, jobTitle: 'Director' }));
    expect(await entityFields(ws.a, 'a-4')).toMatchObject({ jobTitle: 'Director' });
    // A made the edit: it is owed nothing. B is owed the later edit.
    expect(await pendingFor(ws.a)).toEqual([]);
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'Director' }]);
    // The receipt lands; B's later full read (its record as our write left it) is an echo too.
    await playPush(pool, ws.b, at(12), { from: 'sending' });
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-4', at(12.5), { ...di, jobTitle: 'Lead' }));
    expect(await entityFields(ws.b, 'b-4')).toMatchObject({ jobTitle: 'Director' });
    expect(await pendingFor(ws.a)).toEqual([]);
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'Director' }]);
    const { rows: conflicts } = await pool.query('SELECT 1 FROM merge_conflict WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    expect(conflicts).toEqual([]);
  });

  it('a write of an earlier state landing after the next was computed: the target is owed what that next write lacked', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const ed = { email: 'ed@initech.example', firstName: 'Ed', jobTitle: 'Analyst', phone: null };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-5', at(0), ed));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-5', at(1), ed));
    // A promotes Ed at 10 s; a pusher takes B's write of it at 11 s.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-5', at(10), { ...ed, jobTitle: 'CTO' }));
    expect(await claimPush(pool, ws.b, at(11))).toBe(1);
    // A takes it back at 20 s and adds a phone. B, as far as its receipts say, still holds the
    // old title: it is owed the phone alone, and a pusher takes that write at 21 s too.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-5', at(20), { ...ed, phone: '+1 415 555 0142' }));
    expect(await pendingFor(ws.b)).toEqual([{ phone: '+1 415 555 0142' }]);
    expect(await claimPush(pool, ws.b, at(21))).toBe(1);
    // The first write lands (B holds CTO now), its receipt comes, and B reports the record.
    const { rows: first } = await pool.query<OutboxRow>(
      `UPDATE outbox SET status = 'sent' WHERE connection_id = $1 AND status = 'sending' AND fields ? 'jobTitle'
       RETURNING workspace_id, entity_id, entity_type, op, external_id, fields, prior, heads, idempotency_key`,
      [ws.b],
    );
    expect(first).toHaveLength(1);
    await inTransaction(pool, (client) =>
      foldWriteEvents(client, [
        logEventOf(
          receiptOf(first[0]!, { connectionId: ws.b, entityType: 'person', externalId: 'b-5' }, at(11)),
        ),
      ]),
    );
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-5', at(12), { ...ed, jobTitle: 'CTO' }));
    // The write on its way carries the phone alone: B is owed the title back as well.
    expect(await entityFields(ws.a, 'a-5')).toMatchObject({ jobTitle: 'Analyst', phone: '+1 415 555 0142' });
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'Analyst', phone: '+1 415 555 0142' }]);
    expect(await pendingFor(ws.a)).toEqual([]);
  });

  it("a person's edit in Syncline merges as theirs and is owed to every CRM; only from the workspace's own connection", async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const { handle } = syncStage(pool);
    const own = randomUUID();
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, 'syncline', 'syncline', 'live')`,
      [own, ws.workspaceId],
    );
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const di = { email: 'di@globex.example', firstName: 'Di', jobTitle: 'Analyst' };
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-4', at(0), di));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-4', at(1), di));
    const { rows } = await pool.query<{ entity_id: string }>(
      'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
      [ws.a, 'a-4'],
    );
    const entityId = rows[0]!.entity_id;
    const edit = (connectionId: string, key: string, jobTitle: string) => ({
      ...contactEvent(ws.workspaceId, connectionId, entityId, at(5), { jobTitle }),
      eventKey: key,
      origin: { kind: 'user', userId: 'key-1' },
    });
    // Claimed from a provider connection, the same origin is nobody's edit.
    await handle(edit(ws.a, 'edit:forged', 'Forged'));
    expect(await entityFields(ws.a, 'a-4')).toMatchObject({ jobTitle: 'Analyst' });
    await handle(edit(own, 'edit:1', 'Director'));
    expect(await entityFields(ws.a, 'a-4')).toMatchObject({ jobTitle: 'Director' });
    expect(await pendingFor(ws.a)).toEqual([{ jobTitle: 'Director' }]);
    expect(await pendingFor(ws.b)).toEqual([{ jobTitle: 'Director' }]);
    expect(await pendingFor(own)).toEqual([]);
    const provenance = await pool.query<{ provenance: Record<string, { source: unknown }> }>(
      'SELECT provenance FROM entity WHERE id = $1',
      [entityId],
    );
    expect(provenance.rows[0]?.provenance.jobTitle?.source).toEqual({ kind: 'user', id: 'key-1' });
  });
});

describe('what a batch owes outside its transaction', () => {
  it('names the connections owed writes, and those to read again for a record they notified but no one knows', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' }, { reconciled: true });
    const { handle } = syncStage(pool);
    const at = new Date(Date.now() - 60_000);
    const ada = { email: 'ada@analytical.example', firstName: 'Ada' };
    // A new contact in A: B (reconciled) is owed its create; nothing is to be read again.
    expect(await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at, ada))).toEqual({
      push: [ws.b],
      pull: [],
    });
    // A notification of a property of a contact no one knows: B is read again; nothing is owed.
    const notified = {
      ...contactEvent(ws.workspaceId, ws.b, 'b-7', at, { firstName: 'Bea' }),
      origin: { partial: true },
    };
    expect(await handle(notified)).toEqual({ push: [], pull: [ws.b] });
  });
});
