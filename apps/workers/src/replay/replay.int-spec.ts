import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { entityIdFor, IdentityService, identityOperationChange } from '@syncline/identity';
import { ChangeLog, LogConsumer } from '@syncline/log';
import { SyncStage as SyncHandler } from '@syncline/sync-stage';
import { contactEvent, playPush, seedConnections } from '@syncline/sync-stage/testing';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { SYNC_GROUP } from '../sync/sync-group';
import { applyReplay, previewReplay, ReplayRefused } from './replay-rebuild';

/**
 * Replay against the real sync stage on a real database: the live stage is the `sync`
 * consumer group (LogConsumer + SyncHandler, one long-lived handler as a worker has it) over
 * events on the real change log; a replay rebuilds the workspace from those events.
 *
 * The world: one person in CRM A and CRM B (same address: one entity). Both edited jobTitle
 * and phone without seeing each other; under lww B's later values won and were written to A,
 * whose report of them (the echo) came back. Then the admin changes the policies: jobTitle by
 * priority [A, B], phone manual.
 */

const PARTITIONS = 4;
let db: TestDatabase;
let pool: Pool;
let log: ChangeLog;
const live = () =>
  new SyncHandler({ identity: new IdentityService(), engine: liveEngine, connectionsTtlMs: 0 });
let liveEngine: MergeEngine;
let liveHandler: SyncHandler;

/** The live sync group: every partition to its head. */
async function runLive(): Promise<void> {
  const consumer = new LogConsumer({
    group: SYNC_GROUP,
    partitions: PARTITIONS,
    connection: db.url,
    handler: async (tx, events) => {
      await liveHandler.handle(tx, events);
    },
  });
  await consumer.start();
  try {
    await consumer.processAvailable();
  } finally {
    await consumer.stop();
  }
}

const append = async (...events: ReturnType<typeof contactEvent>[]) => {
  // As a connector appends them: no origin rather than a null one.
  const appended = await log.append(events.map(({ origin: _o, ...e }) => e));
  if (!appended.ok) throw new Error(appended.error.message);
};

const rows = async <R extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
  (await pool.query<R>(sql, params)).rows;

/** Everything a rebuild could touch, for "nothing was written". */
const world = async (workspaceId: string) => ({
  entities: await rows(
    'SELECT id, fields, provenance, heads, version, flags, merged_into FROM entity WHERE workspace_id = $1 ORDER BY id',
    [workspaceId],
  ),
  links: await rows('SELECT * FROM source_link WHERE workspace_id = $1 ORDER BY 2, 3, 4', [workspaceId]),
  docs: await rows(
    `SELECT d.entity_id, md5(d.doc) AS doc, (SELECT string_agg(md5(c.chunk), ',' ORDER BY c.seq) FROM entity_doc_change c
       WHERE c.entity_id = d.entity_id) AS chunks FROM entity_doc d WHERE d.workspace_id = $1 ORDER BY 1`,
    [workspaceId],
  ),
  synced: await rows(
    `SELECT s.* FROM entity_synced_heads s JOIN entity e ON e.id = s.entity_id WHERE e.workspace_id = $1 ORDER BY 1, 2`,
    [workspaceId],
  ),
  conflicts: await rows('SELECT * FROM merge_conflict WHERE workspace_id = $1 ORDER BY id', [workspaceId]),
  outbox: await rows('SELECT * FROM outbox WHERE workspace_id = $1 ORDER BY id', [workspaceId]),
  receipts: await rows('SELECT * FROM write_receipt WHERE workspace_id = $1 ORDER BY 1, 2', [workspaceId]),
  outboxSequence: await rows('SELECT last_value, is_called FROM outbox_id_seq'),
});

const t0 = Date.now() - 120_000;
const at = (s: number) => new Date(t0 + s * 1000);
const person = { email: 'ada@analytical.example', firstName: 'Ada', lastName: 'Lovelace' };

/** The entity a connection's record is linked to. */
const linkedEntity = async (connectionId: string, externalId: string) =>
  (
    await rows<{ entity_id: string }>(
      'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
      [connectionId, externalId],
    )
  )[0]?.entity_id;

/** A user's merge of two people, as the API puts it on the log (by the workspace's own connection). */
async function appendMerge(
  ws: { workspaceId: string; own: string },
  survivorId: string,
  absorbedId: string,
  operationId: string = randomUUID(),
): Promise<void> {
  const merge = identityOperationChange(
    { kind: 'merge', operationId, workspaceId: ws.workspaceId, entityType: 'person', survivorId, absorbedId },
    ws.own,
    at(10),
  );
  const appended = await log.append([merge]);
  if (!appended.ok) throw new Error(appended.error.message);
}

interface World {
  workspaceId: string;
  a: string;
  b: string;
  entityId: string;
}

/** The world above, merged and written back by the live stage under lww. */
async function seedWorld(): Promise<World> {
  const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
  await append(
    contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), { ...person, jobTitle: 'CTO', phone: '+44 1' }),
    contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), { ...person, jobTitle: 'Countess', phone: '+44 2' }),
  );
  await runLive();
  const [link] = await rows<{ entity_id: string }>(
    'SELECT entity_id FROM source_link WHERE connection_id = $1',
    [ws.a],
  );
  const entityId = link!.entity_id;
  expect(await rows('SELECT entity_id FROM source_link WHERE connection_id = $1', [ws.b])).toEqual([
    { entity_id: entityId },
  ]);
  // A is written B's winning values and reports them back (the echo); the receipt recognises it.
  const sent = await playPush(pool, ws.a, at(10), { log });
  expect(sent.map((s) => s.fields)).toEqual([{ jobTitle: 'Countess', phone: '+44 2' }]);
  await append(
    contactEvent(ws.workspaceId, ws.a, 'a-1', at(11), { ...person, jobTitle: 'Countess', phone: '+44 2' }),
  );
  await runLive();
  const [entity] = await rows<{ fields: Record<string, unknown> }>(
    'SELECT fields FROM entity WHERE id = $1',
    [entityId],
  );
  expect(entity?.fields).toMatchObject({ jobTitle: 'Countess', phone: '+44 2' });
  expect(await pendingWrites(ws.workspaceId)).toEqual([]);
  return { workspaceId: ws.workspaceId, a: ws.a, b: ws.b, entityId };
}

async function changePolicies(w: World): Promise<void> {
  await pool.query(
    `INSERT INTO field_policy (workspace_id, entity_type, field, policy, priority)
     VALUES ($1, 'person', 'jobTitle', 'priority', $2), ($1, 'person', 'phone', 'manual', '[]')`,
    [w.workspaceId, JSON.stringify([w.a, w.b])],
  );
}

const pendingWrites = (workspaceId: string) =>
  rows<{ connection_id: string; op: string; fields: Record<string, unknown> }>(
    `SELECT connection_id, op, fields FROM outbox WHERE workspace_id = $1 AND status = 'pending' ORDER BY connection_id, id`,
    [workspaceId],
  );

beforeAll(async () => {
  db = await createTestDatabase('replay');
  pool = new Pool({ connectionString: db.url, max: 6 });
  log = new ChangeLog(pool, { partitions: PARTITIONS });
  await log.init();
  liveEngine = new MergeEngine(new PgMergeStore(pool));
  liveHandler = live();
});

afterAll(async () => {
  await log?.close();
  await pool?.end();
  await db?.drop();
});

describe('replay of a workspace after a policy change', () => {
  let w: World;
  beforeAll(async () => {
    w = await seedWorld();
    await changePolicies(w);
  });

  it('preview reports the values that would change and writes nothing', async () => {
    const before = await world(w.workspaceId);
    let seenInside: unknown;
    const report = await previewReplay(pool, w.workspaceId, 'beginning', {
      // Inside, the copies do hold the rebuilt state (so the comparison is not vacuous).
      inspect: async (client) => {
        seenInside = (await client.query('SELECT fields FROM entity WHERE id = $1', [w.entityId])).rows[0];
      },
    });
    expect(seenInside).toMatchObject({ fields: { jobTitle: 'CTO' } });
    // Three reports and the receipt of our write to A.
    expect(report.scope).toMatchObject({ entities: 1, events: 4 });
    expect(report.summary).toMatchObject({ changes: 1, created: 0, gone: 0, linksMoved: 0, failures: 0 });
    expect(report.changes).toEqual([
      {
        entityId: w.entityId,
        entityType: 'person',
        displayName: expect.any(String),
        fields: {
          // Phone is manual now: its value stays as it is until a person settles the conflict.
          jobTitle: { from: 'Countess', to: 'CTO', source: { kind: 'connection', id: w.a } },
        },
      },
    ]);
    expect(report.conflicts).toEqual([
      expect.objectContaining({
        entityId: w.entityId,
        field: 'phone',
        policy: 'manual',
        change: 'appeared',
        after: 'open',
      }),
    ]);
    // What apply would owe: the final jobTitle to both CRMs (A holds B's value we wrote it).
    expect(report.writes.map((x) => [x.connectionId, x.fields.jobTitle])).toEqual(
      expect.arrayContaining([
        [w.a, 'CTO'],
        [w.b, 'CTO'],
      ]),
    );
    expect(await world(w.workspaceId)).toEqual(before);
    expect(await pendingWrites(w.workspaceId)).toEqual([]);
  });

  it('apply changes the value, records conflicts as the new policies say, and owes the CRMs the final value only', async () => {
    const before = await world(w.workspaceId);
    const versionBefore = Number((before.entities[0] as { version: string }).version);
    const report = await applyReplay(pool, w.workspaceId, 'beginning');
    expect(report.summary).toMatchObject({ changes: 1, conflictsAppeared: 1, failures: 0 });

    const [entity] = await rows<{
      fields: Record<string, unknown>;
      provenance: Record<string, { source: unknown }>;
      version: string;
    }>('SELECT fields, provenance, version FROM entity WHERE id = $1', [w.entityId]);
    expect(entity?.fields.jobTitle).toBe('CTO');
    expect(entity?.provenance.jobTitle?.source).toEqual({ kind: 'connection', id: w.a });
    // Every worker's cached document is dropped: the version is past any it wrote.
    expect(Number(entity?.version)).toBeGreaterThan(versionBefore);

    const conflicts = await rows<{ field: string; policy: string; status: string; resolution: unknown }>(
      `SELECT field, policy, status::text AS status, resolution FROM merge_conflict WHERE entity_id = $1 ORDER BY field`,
      [w.entityId],
    );
    expect(conflicts).toEqual([
      expect.objectContaining({
        field: 'jobTitle',
        policy: 'priority',
        status: 'resolved',
        resolution: {
          winner: expect.objectContaining({ value: 'CTO', source: { kind: 'connection', id: w.a } }),
        },
      }),
      expect.objectContaining({ field: 'phone', policy: 'manual', status: 'open' }),
    ]);
    // Each CRM is owed the final jobTitle once, and never B's old value; phone waits for a person.
    const owed = await pendingWrites(w.workspaceId);
    expect(owed.map((r) => [r.connection_id, r.op, r.fields])).toEqual(
      [
        [w.a, 'update', { jobTitle: 'CTO' }],
        [w.b, 'update', { jobTitle: 'CTO' }],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );

    // The live stage goes on from the rebuilt state with its cached document dropped: a new
    // edit in B (after seeing everything) merges onto it without error and owes A only that.
    await append(
      contactEvent(w.workspaceId, w.b, 'b-1', at(30), {
        ...person,
        jobTitle: 'CTO',
        phone: '+44 2',
        lastName: 'King',
      }),
    );
    await runLive();
    const [after] = await rows<{ fields: Record<string, unknown> }>(
      'SELECT fields FROM entity WHERE id = $1',
      [w.entityId],
    );
    expect(after?.fields).toMatchObject({ jobTitle: 'CTO', lastName: 'King' });
  });
});

describe('replay of an unchanged workspace', () => {
  it('from the beginning changes nothing: empty report, identical documents and heads', async () => {
    const w = await seedWorld();
    const before = await world(w.workspaceId);
    const preview = await previewReplay(pool, w.workspaceId, 'beginning');
    expect(preview.summary).toEqual({
      changes: 0,
      created: 0,
      gone: 0,
      conflictsAppeared: 0,
      conflictsDisappeared: 0,
      linksMoved: 0,
      writes: 0,
      failures: 0,
    });
    const applied = await applyReplay(pool, w.workspaceId, 'beginning');
    expect(applied.summary).toEqual(preview.summary);
    const after = await world(w.workspaceId);
    const strip = (entities: unknown[]) =>
      entities.map((e) => {
        const { version: _v, ...rest } = e as { version: string };
        return rest;
      });
    expect(strip(after.entities)).toEqual(strip(before.entities));
    expect(after.links).toEqual(before.links);
    expect(after.synced.map(({ updated_at: _u, ...s }) => s)).toEqual(
      before.synced.map(({ updated_at: _u, ...s }) => s),
    );
    expect(after.conflicts).toEqual(before.conflicts);
    expect(await pendingWrites(w.workspaceId)).toEqual([]);
  });

  it('gives every record back the entity id it has, whichever of its records the rebuild meets first', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    // B's record reaches the live stage first and creates the entity; A's comes after. Then
    // the two events change places on the log, as the move of a log kept by record onto one
    // partition per workspace (migration 20261214000000_log_by_workspace) can order records of
    // two old partitions otherwise than the live stage met them: the rebuild meets A's first.
    const [extA, extB] = ['a-1', 'b-1'];
    const grace = { email: 'grace@navy.example', firstName: 'Grace', lastName: 'Hopper' };
    await append(contactEvent(ws.workspaceId, ws.b, extB, at(1), grace));
    await runLive();
    await append(contactEvent(ws.workspaceId, ws.a, extA, at(2), { ...grace, jobTitle: 'Rear Admiral' }));
    await runLive();
    const [live] = await rows<{ id: string }>('SELECT id FROM entity WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    expect(live?.id).toBe(entityIdFor(ws.workspaceId, ws.b, 'person', extB));
    await pool.query(
      `UPDATE change_event e SET "offset" = -s.other
         FROM (SELECT "offset", sum("offset") OVER () - "offset" AS other FROM change_event WHERE workspace_id = $1) s
        WHERE e.workspace_id = $1 AND e."offset" = s."offset"`,
      [ws.workspaceId],
    );
    await pool.query('UPDATE change_event SET "offset" = -"offset" WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    const [first] = await rows<{ external_id: string }>(
      'SELECT external_id FROM change_event WHERE workspace_id = $1 ORDER BY "offset" LIMIT 1',
      [ws.workspaceId],
    );
    expect(first?.external_id).toBe(extA);

    const preview = await previewReplay(pool, ws.workspaceId, 'beginning');
    expect(preview.summary).toMatchObject({ changes: 0, created: 0, gone: 0, linksMoved: 0 });
    await applyReplay(pool, ws.workspaceId, 'beginning');
    expect(await rows('SELECT id FROM entity WHERE workspace_id = $1', [ws.workspaceId])).toEqual([
      { id: live!.id },
    ]);
  });

  it('from an event time rebuilds only the records with events since, and changes nothing either', async () => {
    const w = await seedWorld();
    await append(
      contactEvent(w.workspaceId, w.b, 'b-2', at(2), { email: 'alan@bletchley.example', firstName: 'Alan' }),
    );
    await runLive();
    const report = await previewReplay(pool, w.workspaceId, { eventTime: at(5) });
    // Only Ada has an event at or after at(5) (A's echo, and the receipt of our write); Alan is left alone.
    expect(report.scope).toMatchObject({ entities: 1, events: 4 });
    expect(report.summary.changes).toBe(0);
  });
});

describe('replay while the live stage runs', () => {
  it('an apply holds the live stage for this workspace; events appended meanwhile are merged once, after it', async () => {
    const w = await seedWorld();
    await changePolicies(w);
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inside!: () => void;
    const reachedInside = new Promise<void>((r) => {
      inside = r;
    });
    const replay = applyReplay(pool, w.workspaceId, 'beginning', {
      beforeCommit: async () => {
        inside();
        await held;
      },
    });
    await reachedInside;
    // A new edit in B lands on the log while the apply is open: the live stage must wait.
    await append(
      contactEvent(w.workspaceId, w.b, 'b-1', at(40), { ...person, jobTitle: 'Countess', lastName: 'Byron' }),
    );
    const liveRun = runLive();
    const waited = await Promise.race([
      liveRun.then(() => 'ran'),
      new Promise((r) => setTimeout(() => r('waiting'), 1_500)),
    ]);
    expect(waited).toBe('waiting');
    // It waits on the connection row lock (FOR KEY SHARE against the replay's FOR UPDATE).
    const blocked = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    expect(blocked[0]?.n).toBeGreaterThan(0);
    release();
    const report = await replay;
    // The new event was not part of the rebuild (it was not committed by the live stage)...
    expect(report.scope.events).toBe(4);
    await liveRun;
    // ...and the live stage merged it exactly once, on top of the rebuilt state.
    const [entity] = await rows<{ fields: Record<string, unknown> }>(
      'SELECT fields FROM entity WHERE id = $1',
      [w.entityId],
    );
    // B's new jobTitle saw everything (its view caught up on the rebuilt state)? It still ranks after A.
    expect(entity?.fields.lastName).toBe('Byron');
    const applied = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM entity_doc_change c WHERE c.entity_id = $1 AND position($2::bytea IN c.chunk) > 0`,
      [w.entityId, Buffer.from(`contacts:b-1:${at(40).getTime()}`)],
    );
    const [doc] = await rows<{ doc: Buffer }>('SELECT doc FROM entity_doc WHERE entity_id = $1', [
      w.entityId,
    ]);
    const inSnapshot = doc?.doc.includes(Buffer.from(`contacts:b-1:${at(40).getTime()}`)) ? 1 : 0;
    expect((applied[0]?.n ?? 0) + inSnapshot).toBe(1);
    const [offset] = await rows<{ behind: number }>(
      `SELECT count(*)::int AS behind FROM change_event e JOIN consumer_offset o ON o.partition = e.partition
        WHERE o.group_name = $1 AND e."offset" > o.committed_offset`,
      [SYNC_GROUP],
    );
    expect(offset?.behind).toBe(0);
  });
});

describe('a replay that cannot rebuild', () => {
  it('is refused with its reason and leaves the live state untouched', async () => {
    const w = await seedWorld();
    // Retention removed B's events: the record is linked, but the log no longer holds its history.
    await pool.query(`DELETE FROM change_event WHERE connection_id = $1`, [w.b]);
    const before = await world(w.workspaceId);
    const failed = applyReplay(pool, w.workspaceId, 'beginning');
    await expect(failed).rejects.toBeInstanceOf(ReplayRefused);
    await expect(failed).rejects.toThrow(/history_incomplete.*1 linked record/);
    expect(await world(w.workspaceId)).toEqual(before);
  });
});

describe('replay of a merge HubSpot was asked to make', () => {
  it('reproduces the merge and the fold, owes no second HubSpot merge, and keeps the one sent', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', own: 'syncline' }, { reconciled: true });
    const first = { ...person, email: 'ada.p@portal.example', jobTitle: 'CTO' };
    const second = { ...person, email: 'ada.q@portal.example', phone: '+44 3' };
    await append(
      contactEvent(ws.workspaceId, ws.a, 'p-1', at(0), first),
      contactEvent(ws.workspaceId, ws.a, 'q-1', at(1), second),
    );
    await runLive();
    const survivor = (await linkedEntity(ws.a, 'p-1'))!;
    const absorbed = (await linkedEntity(ws.a, 'q-1'))!;
    expect(absorbed).not.toBe(survivor);
    await appendMerge(ws, survivor, absorbed);
    await runLive();
    // The merge was owed once and sent (HubSpot merged), then the union, echoed back.
    expect((await pendingWrites(ws.workspaceId)).map((r) => r.op)).toEqual(['merge', 'update']);
    await playPush(pool, ws.a, at(12), { log });
    await append(
      contactEvent(ws.workspaceId, ws.a, 'p-1', at(13), { ...first, email: second.email, phone: '+44 3' }),
    );
    await runLive();
    expect(await pendingWrites(ws.workspaceId)).toEqual([]);
    const merges = () =>
      rows<{ status: string; idempotency_key: string }>(
        `SELECT status, idempotency_key FROM outbox WHERE workspace_id = $1 AND op = 'merge' ORDER BY id`,
        [ws.workspaceId],
      );
    const sent = await merges();
    expect(sent.map((m) => m.status)).toEqual(['sent']);
    const before = await world(ws.workspaceId);

    const preview = await previewReplay(pool, ws.workspaceId, 'beginning');
    expect(preview.writes.filter((x) => x.op === 'merge')).toEqual([]);
    const report = await applyReplay(pool, ws.workspaceId, 'beginning');
    expect(report.summary).toMatchObject({ changes: 0, created: 0, gone: 0, linksMoved: 0, failures: 0 });
    expect(report.writes.filter((x) => x.op === 'merge')).toEqual([]);
    // The one merge HubSpot made stays the one sent; nothing asks for it again.
    expect(await merges()).toEqual(sent);
    expect((await pendingWrites(ws.workspaceId)).filter((r) => r.op === 'merge')).toEqual([]);
    const after = await world(ws.workspaceId);
    // The same records fold the same way: the survivor keeps its own, the other stays folded.
    expect(after.links).toEqual(before.links);
    const flagsOf = (w: typeof before, id: string) =>
      (w.entities as { id: string; flags: Record<string, unknown>; merged_into: string | null }[]).find(
        (e) => e.id === id,
      );
    expect(flagsOf(after, absorbed)).toMatchObject({
      merged_into: survivor,
      flags: { folded: [`${ws.a}|person|q-1`], providerMerged: { [`${ws.a}|person|q-1`]: 'p-1' } },
    });
    expect(flagsOf(after, survivor)?.flags).toEqual(flagsOf(before, survivor)?.flags);
  });
});

describe('replay in the order of the log', () => {
  it('follows the log, not arrival times: a merge that came just after its records is still applied after them', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', own: 'syncline' });
    const operationId = randomUUID();
    const [suffix, other] = [1, 2];
    await append(
      contactEvent(ws.workspaceId, ws.a, `p-${suffix}`, at(0), { ...person, email: 'ada.p@portal.example' }),
      contactEvent(ws.workspaceId, ws.a, `q-${other}`, at(1), { ...person, email: 'ada.q@portal.example' }),
    );
    await runLive();
    const survivor = (await linkedEntity(ws.a, `p-${suffix}`))!;
    const absorbed = (await linkedEntity(ws.a, `q-${other}`))!;
    await appendMerge(ws, survivor, absorbed, operationId);
    await runLive();
    // As if the live stage had been quick: the merge came 20 ms after the records.
    await pool.query(
      `UPDATE change_event SET ingested_at = (SELECT min(ingested_at) FROM change_event WHERE workspace_id = $1) + interval '20 ms'
        WHERE workspace_id = $1 AND connection_id = $2`,
      [ws.workspaceId, ws.own],
    );
    const before = await world(ws.workspaceId);
    expect(
      (before.entities as { id: string; merged_into: string | null }[]).find((e) => e.id === absorbed)
        ?.merged_into,
    ).toBe(survivor);

    const report = await applyReplay(pool, ws.workspaceId, 'beginning');
    expect(report.summary).toMatchObject({ changes: 0, created: 0, gone: 0, linksMoved: 0, failures: 0 });
    const after = await world(ws.workspaceId);
    expect(after.links).toEqual(before.links);
    expect(after.entities.map(({ version: _v, ...e }) => e)).toEqual(
      before.entities.map(({ version: _v, ...e }) => e),
    );
  });
});

describe('replay of a workspace with calendar attendees', () => {
  it('rebuilds the people made from attendees (links known only through their meeting) without refusing', async () => {
    const ws = await seedConnections(pool, { crm: 'hubspot', calendar: 'google-calendar', own: 'syncline' });
    await append(contactEvent(ws.workspaceId, ws.crm, 'c-ada', at(0), person), {
      workspaceId: ws.workspaceId,
      connectionId: ws.calendar,
      entityType: 'meeting',
      externalId: 'evt-1',
      op: 'upsert',
      eventKey: `events:evt-1:${at(1).getTime()}`,
      fields: {
        iCalUID: 'uid-1@google.com',
        title: 'Roadmap review',
        startAt: '2026-11-25T14:00:00.000Z',
        organizer: 'me@syncline.example',
        attendees: [
          { email: 'me@syncline.example', responseStatus: 'accepted', organizer: true },
          { email: person.email, responseStatus: 'accepted' },
          { email: 'bob@guest.example', responseStatus: 'needsAction' },
        ],
      },
      fieldTimes: {},
      eventTime: at(1),
      origin: null,
    });
    await runLive();
    // Attendees are linked to people by address (Ada's to her CRM person; Bob and the organizer
    // are people of their own): these links (mailto:) have no event of their own on the log.
    const participants = await rows<{ external_id: string }>(
      `SELECT external_id FROM source_link WHERE connection_id = $1 AND entity_type = 'person' ORDER BY 1`,
      [ws.calendar],
    );
    expect(participants.map((r) => r.external_id)).toEqual([
      'mailto:ada@analytical.example',
      'mailto:bob@guest.example',
      'mailto:me@syncline.example',
    ]);
    const before = await world(ws.workspaceId);

    const preview = await previewReplay(pool, ws.workspaceId, 'beginning');
    expect(preview.summary).toMatchObject({ changes: 0, created: 0, gone: 0, linksMoved: 0, failures: 0 });
    const applied = await applyReplay(pool, ws.workspaceId, 'beginning');
    expect(applied.summary).toMatchObject({ changes: 0, created: 0, gone: 0, linksMoved: 0, failures: 0 });
    const after = await world(ws.workspaceId);
    const people = (w: typeof before) =>
      w.entities.map((e) => [e.id, (e.fields as Record<string, unknown>).email, e.merged_into]);
    expect(people(after)).toEqual(people(before));
    expect(after.links).toEqual(before.links);
  });
});
