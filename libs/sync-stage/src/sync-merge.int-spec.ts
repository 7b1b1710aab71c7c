import { randomUUID } from 'node:crypto';
import { type IdentityIntent, identityOperationChange } from '@syncline/identity';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { contactEvent, playPush, type StageEvent, seedConnections, syncStage } from './testing/sync-stage';

/**
 * Merges and unmerges of entities in the sync stage, against real Postgres: the survivor's
 * document takes in the absorbed entity's values, every CRM is owed the union, and an
 * unmerge gives both entities back with their systems owed their own values again.
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('sync_merge');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** An identity operation as the API appends it: a change of the workspace's own connection. */
const operation = (intent: IdentityIntent, own: string, at: Date): StageEvent => {
  const change = identityOperationChange(intent, own, at);
  return { ...change, eventTime: at, fields: change.fields ?? {}, fieldTimes: {}, origin: null };
};

interface OwnConnection {
  workspaceId: string;
  own: string;
}

/** A merge of `absorbedId` into `survivorId` on the log, as the API appends it. */
const mergeEvent = (
  ws: OwnConnection,
  operationId: string,
  survivorId: string,
  absorbedId: string,
  at: Date,
  requestedBy?: string,
): StageEvent =>
  operation(
    {
      kind: 'merge',
      operationId,
      workspaceId: ws.workspaceId,
      entityType: 'person',
      survivorId,
      absorbedId,
      ...(requestedBy === undefined ? {} : { requestedBy }),
    },
    ws.own,
    at,
  );

/** The undoing of merge `undoes` on the log, as the API appends it. */
const unmergeEvent = (ws: OwnConnection, undoes: string, at: Date, requestedBy?: string): StageEvent =>
  operation(
    {
      kind: 'unmerge',
      operationId: randomUUID(),
      workspaceId: ws.workspaceId,
      entityType: 'person',
      undoes,
      ...(requestedBy === undefined ? {} : { requestedBy }),
    },
    ws.own,
    at,
  );

const entityOf = async (connectionId: string, externalId: string): Promise<string> => {
  const { rows } = await pool.query<{ entity_id: string }>(
    'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
    [connectionId, externalId],
  );
  const id = rows[0]?.entity_id;
  if (id === undefined) throw new Error(`${externalId} is not linked`);
  return id;
};

async function view(entityId: string) {
  const { rows } = await pool.query<{
    fields: Record<string, unknown>;
    provenance: Record<string, { source: { kind: string; id: string } }>;
    merged_into: string | null;
    heads: string[];
  }>('SELECT fields, provenance, merged_into, heads FROM entity WHERE id = $1', [entityId]);
  const row = rows[0];
  if (row === undefined) throw new Error(`no entity ${entityId}`);
  return row;
}

async function pendingFor(connectionId: string) {
  const { rows } = await pool.query<{
    entity_id: string;
    external_id: string;
    fields: Record<string, unknown>;
  }>(
    `SELECT entity_id, external_id, fields FROM outbox WHERE connection_id = $1 AND status = 'pending' ORDER BY id`,
    [connectionId],
  );
  return rows;
}

/** Plays the push stage: the pending rows of a connection are "sent" and leave receipts. */
const sendOwed = async (connectionId: string, sentAt: Date) =>
  (await playPush(pool, connectionId, sentAt)).map((r) => r.fields);
/** Plays the push stage for creates too: a created record is linked at once, as PushService does. */
const pushAll = async (connectionId: string, sentAt: Date) =>
  (await playPush(pool, connectionId, sentAt, { linkCreates: true })).map(({ op, entityId }) => ({
    op,
    entityId,
  }));

const linksOf = async (entityId: string) =>
  (
    await pool.query<{ connection_id: string; external_id: string }>(
      'SELECT connection_id, external_id FROM source_link WHERE entity_id = $1 ORDER BY connection_id, external_id',
      [entityId],
    )
  ).rows;

const t0 = Date.now() - 120_000;
const at = (s: number) => new Date(t0 + s * 1000);
// Two records of one person in two CRMs, different addresses: two entities, never merged silently.
const inB = { email: 'augusta@byron.example', firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'Countess' };
const inA = { email: 'ada@analytical.example', firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'CTO' };
const phone = '+44 20 7946 0000';

describe('the sync stage merges and unmerges entities', () => {
  it('a merge gives the survivor the union, owes each CRM the other’s values; an unmerge gives both back', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
    const { handle } = syncStage(pool);
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(0), { ...inB, phone }));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(1), inA));
    const survivor = await entityOf(ws.a, 'a-1');
    const absorbed = await entityOf(ws.b, 'b-1');
    expect(absorbed).not.toBe(survivor);
    const mergeId = randomUUID();
    await handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10), 'key-1'));

    const merged = await view(survivor);
    // A's later values win the fields both had (lww); B's phone, which only it had, is taken.
    expect(merged.fields).toEqual({ ...inA, phone });
    expect(merged.provenance.phone?.source).toEqual({ kind: 'connection', id: ws.b });
    expect(merged.provenance.jobTitle?.source).toEqual({ kind: 'connection', id: ws.a });
    expect((await view(absorbed)).merged_into).toBe(survivor);
    // Each CRM is owed what it lacks of the union, on its own record.
    expect(await pendingFor(ws.a)).toEqual([{ entity_id: survivor, external_id: 'a-1', fields: { phone } }]);
    expect(await pendingFor(ws.b)).toEqual([
      {
        entity_id: survivor,
        external_id: 'b-1',
        fields: { email: inA.email, jobTitle: 'CTO' },
      },
    ]);

    // The writes go out, and both CRMs report the union back (their echo).
    await sendOwed(ws.a, at(12));
    await sendOwed(ws.b, at(12));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(13), { ...inA, phone }));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(13), { ...inA, phone }));
    expect(await pendingFor(ws.a)).toEqual([]);
    expect(await pendingFor(ws.b)).toEqual([]);

    await handle(unmergeEvent(ws, mergeId, at(20), 'key-1'));
    expect(await entityOf(ws.b, 'b-1')).toBe(absorbed);
    const back = await view(survivor);
    // What only the absorbed entity had is cleared, in the name of who undid the merge.
    expect(back.fields).toEqual({ ...inA, phone: null });
    expect(back.provenance.phone?.source).toEqual({ kind: 'user', id: 'key-1' });
    const split = await view(absorbed);
    expect(split.merged_into).toBeNull();
    expect(split.fields).toEqual({ ...inB, phone });
    // A is owed the clear; B its own values back (it holds the survivor's since the merge).
    expect(await pendingFor(ws.a)).toEqual([
      { entity_id: survivor, external_id: 'a-1', fields: { phone: null } },
    ]);
    expect(await pendingFor(ws.b)).toEqual([
      { entity_id: absorbed, external_id: 'b-1', fields: { email: inB.email, jobTitle: 'Countess' } },
    ]);
  });

  it('a record naming two entities by their addresses joins them: the union everywhere, no provider merge, the reason kept', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', c: 'hubspot', own: 'syncline' });
    const { handle } = syncStage(pool);
    // A holds both of Ada's addresses as two contacts of its own; B only the second, with a phone.
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), inA));
    await handle(contactEvent(ws.workspaceId, ws.a, 'a-2', at(1), { ...inB, jobTitle: undefined }));
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at(2), { ...inB, phone }));
    const first = await entityOf(ws.a, 'a-1');
    const second = await entityOf(ws.b, 'b-1');
    expect(second).not.toBe(first);
    // C knows her by both addresses: she is one person.
    await handle(
      contactEvent(ws.workspaceId, ws.c, 'c-1', at(3), {
        emails: [inA.email, inB.email],
        firstName: 'Ada',
        lastName: 'Lovelace',
      }),
    );
    const survivor = await entityOf(ws.c, 'c-1');
    const absorbed = survivor === first ? second : first;
    expect([first, second]).toContain(survivor);
    expect((await view(absorbed)).merged_into).toBe(survivor);
    for (const [connection, record] of [
      [ws.a, 'a-1'],
      [ws.a, 'a-2'],
      [ws.b, 'b-1'],
    ] as const)
      expect(await entityOf(connection, record)).toBe(survivor);
    expect((await view(survivor)).fields).toMatchObject({ phone, email: expect.any(String) });
    // A keeps both its contacts, each owed the union: Syncline never asks HubSpot to merge them.
    const owed = await pool.query<{ op: string; external_id: string | null }>(
      `SELECT op, external_id FROM outbox WHERE connection_id = $1 AND status = 'pending' ORDER BY external_id`,
      [ws.a],
    );
    expect(owed.rows.map((r) => r.op)).not.toContain('merge');
    const { rows: ops } = await pool.query<{ payload: { reason?: { rule: string; evidence: string[] } } }>(
      `SELECT payload FROM identity_operation WHERE workspace_id = $1 AND kind = 'merge'`,
      [ws.workspaceId],
    );
    expect(ops).toHaveLength(1);
    expect(ops[0]?.payload.reason).toEqual({
      rule: 'shared-key',
      evidence: expect.arrayContaining([`email:${inA.email}`, `email:${inB.email}`]),
      score: 1,
    });
    const { rows: reasons } = await pool.query<{ link_reason: unknown }>(
      'SELECT link_reason FROM source_link WHERE connection_id = $1',
      [ws.c],
    );
    expect(reasons[0]?.link_reason).toEqual({
      rule: 'shared-key',
      evidence: [expect.stringMatching(/^email:/)],
      score: 1,
    });
  });

  it('a field the absorbed entity won while merged goes back to the survivor’s own value on unmerge', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
    const { handle } = syncStage(pool);
    // A first, then B: B's address is the later one and wins the merged view.
    await handle(
      contactEvent(ws.workspaceId, ws.a, 'a-5', at(0), { ...inA, email: 'a5@analytical.example' }),
    );
    await handle(
      contactEvent(ws.workspaceId, ws.b, 'b-5', at(1), { ...inB, email: 'b5@byron.example', phone }),
    );
    const survivor = await entityOf(ws.a, 'a-5');
    const absorbed = await entityOf(ws.b, 'b-5');
    const mergeId = randomUUID();
    await handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    expect((await view(survivor)).fields.email).toBe('b5@byron.example');
    expect(await sendOwed(ws.a, at(12))).toEqual([
      { email: 'b5@byron.example', jobTitle: 'Countess', phone },
    ]);
    await sendOwed(ws.b, at(12));
    // No report of A since our write: A holds it all the same (its receipt), and is owed its own back.
    await handle(unmergeEvent(ws, mergeId, at(20)));
    // A gets its own address and title back, and the phone only the absorbed one had is cleared.
    expect((await view(survivor)).fields).toMatchObject({
      email: 'a5@analytical.example',
      jobTitle: 'CTO',
      phone: null,
    });
    expect((await pendingFor(ws.a)).map((r) => r.fields)).toEqual([
      { email: 'a5@analytical.example', jobTitle: 'CTO', phone: null },
    ]);
  });

  it('edits after the merge: the moved CRM’s edit reaches the other; it goes back with the unmerge', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
    const { handle } = syncStage(pool);
    await handle(
      contactEvent(ws.workspaceId, ws.b, 'b-2', at(0), { ...inB, email: 'countess@byron.example' }),
    );
    await handle(
      contactEvent(ws.workspaceId, ws.a, 'a-2', at(1), { ...inA, email: 'ada.l@analytical.example' }),
    );
    const survivor = await entityOf(ws.a, 'a-2');
    const absorbed = await entityOf(ws.b, 'b-2');
    const mergeId = randomUUID();
    await handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    // B's record is now the survivor's: B's edit is merged there and owed to A.
    await handle(contactEvent(ws.workspaceId, ws.b, 'b-2', at(15), { lastName: 'King' }));
    expect((await view(survivor)).fields.lastName).toBe('King');
    expect((await pendingFor(ws.a)).at(-1)?.fields).toMatchObject({ lastName: 'King' });
    await handle(unmergeEvent(ws, mergeId, at(20)));
    // The edit B made while merged comes back with it.
    expect((await view(absorbed)).fields.lastName).toBe('King');
  });

  it('the copies we made of each in the other CRM are archived by the merge and made again by the unmerge', async () => {
    const ws = await seedConnections(
      pool,
      { a: 'hubspot', b: 'hubspot', own: 'syncline' },
      { reconciled: true },
    );
    const { handle } = syncStage(pool);
    await handle(
      contactEvent(ws.workspaceId, ws.b, 'b-4', at(0), { ...inB, email: 'b4@byron.example', phone }),
    );
    await handle(
      contactEvent(ws.workspaceId, ws.a, 'a-4', at(1), { ...inA, email: 'a4@analytical.example' }),
    );
    const survivor = await entityOf(ws.a, 'a-4');
    const absorbed = await entityOf(ws.b, 'b-4');
    // Each CRM got the other's person (the pair was only a possible duplicate then).
    expect(await pushAll(ws.a, at(2))).toEqual([{ op: 'create', entityId: absorbed }]);
    expect(await pushAll(ws.b, at(2))).toEqual([{ op: 'create', entityId: survivor }]);
    const mergeId = randomUUID();
    // In the merge's batch, before it: a notification of our copy in A (X's values), now a
    // record of the survivor's in A. It is folded away with the copy, not A's edit.
    const copyReport = contactEvent(ws.workspaceId, ws.a, `made-for-${absorbed}`, at(9), {
      ...inB,
      email: 'b4@byron.example',
      phone,
    });
    await handle(copyReport, mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    // One record per CRM: each CRM's own, the copies unlinked and archived.
    expect(await linksOf(survivor)).toEqual(
      [
        { connection_id: ws.a, external_id: 'a-4' },
        { connection_id: ws.b, external_id: 'b-4' },
      ].sort((x, y) => x.connection_id.localeCompare(y.connection_id)),
    );
    const archived = async (connectionId: string) =>
      (
        await pool.query<{ external_id: string }>(
          `SELECT external_id FROM outbox WHERE connection_id = $1 AND status = 'pending' AND op = 'delete'`,
          [connectionId],
        )
      ).rows.map((r) => r.external_id);
    expect(await archived(ws.a)).toEqual([`made-for-${absorbed}`]);
    // The copy goes first: the record A keeps takes the copy's address, unique in HubSpot.
    const order = await pool.query<{ op: string }>(
      `SELECT op FROM outbox WHERE connection_id = $1 AND status = 'pending' ORDER BY id`,
      [ws.a],
    );
    expect(order.rows.map((r) => r.op)).toEqual(['delete', 'update']);
    expect(await archived(ws.b)).toEqual([`made-for-${survivor}`]);
    // B's own record (the absorbed one's) is owed the survivor's values; A's its phone.
    const updates = async (connectionId: string) =>
      (await pendingFor(connectionId)).filter(
        (r) => r.external_id !== null && !r.external_id.startsWith('made-for'),
      );
    expect(await updates(ws.a)).toEqual([{ entity_id: survivor, external_id: 'a-4', fields: { phone } }]);
    expect(await updates(ws.b)).toEqual([
      {
        entity_id: survivor,
        external_id: 'b-4',
        fields: { email: 'a4@analytical.example', jobTitle: 'CTO' },
      },
    ]);
    // A late report of a copy (a notification of our create, after the merge) is nobody's edit.
    await handle(
      contactEvent(ws.workspaceId, ws.a, `made-for-${absorbed}`, at(10.5), {
        ...inB,
        email: 'b4@byron.example',
        jobTitle: null,
      }),
    );
    expect((await view(survivor)).fields.jobTitle).toBe('CTO');
    expect(await linksOf(survivor)).toHaveLength(2);
    await pushAll(ws.a, at(11));
    await pushAll(ws.b, at(11));

    await handle(unmergeEvent(ws, mergeId, at(20)));
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.b, external_id: 'b-4' }]);
    // Apart again, each is owed to the CRM that lacks it once more.
    const creates = async (connectionId: string) =>
      (
        await pool.query<{ entity_id: string }>(
          `SELECT entity_id FROM outbox WHERE connection_id = $1 AND status = 'pending' AND op = 'create'`,
          [connectionId],
        )
      ).rows.map((r) => r.entity_id);
    expect(await creates(ws.a)).toEqual([absorbed]);
    expect(await creates(ws.b)).toEqual([survivor]);
    // Each under a key of its own: its receipt is no repeat of the first create's (on the log,
    // an event under the same key would be dropped as one), and the copy it makes is linked.
    const keys = async (connectionId: string, entityId: string) =>
      (
        await pool.query<{ idempotency_key: string; status: string }>(
          `SELECT idempotency_key, status FROM outbox
            WHERE connection_id = $1 AND entity_id = $2 AND op = 'create' ORDER BY id`,
          [connectionId, entityId],
        )
      ).rows;
    // The absorbed entity's copy in A and the survivor's in B alike.
    for (const [connectionId, entityId] of [
      [ws.a, absorbed],
      [ws.b, survivor],
    ] as const) {
      const again = await keys(connectionId, entityId);
      expect(again.map((r) => r.status)).toEqual(['sent', 'pending']);
      expect(again[0]?.idempotency_key).toMatch(/\.folded:/);
      expect(again[1]?.idempotency_key).not.toBe(again[0]?.idempotency_key.replace(/\.folded:.*$/, ''));
      const receipts = await pool.query<{ idempotency_key: string }>(
        'SELECT idempotency_key FROM write_receipt WHERE connection_id = $1 AND entity_id = $2',
        [connectionId, entityId],
      );
      expect(receipts.rows.map((r) => r.idempotency_key)).not.toContain(again[1]?.idempotency_key);
    }
    await pushAll(ws.a, at(21));
    await pushAll(ws.b, at(21));
    const byConnection = (x: { connection_id: string }, y: { connection_id: string }) =>
      x.connection_id.localeCompare(y.connection_id);
    expect(await linksOf(absorbed)).toEqual(
      [
        { connection_id: ws.a, external_id: `made-for-${absorbed}` },
        { connection_id: ws.b, external_id: 'b-4' },
      ].sort(byConnection),
    );
    expect(await linksOf(survivor)).toEqual(
      [
        { connection_id: ws.a, external_id: 'a-4' },
        { connection_id: ws.b, external_id: `made-for-${survivor}` },
      ].sort(byConnection),
    );
    // Merged and undone once more: the copies fold and are made again under newer keys still.
    const second = randomUUID();
    await handle(mergeEvent(ws, second, survivor, absorbed, at(30)));
    await pushAll(ws.a, at(31));
    await pushAll(ws.b, at(31));
    await handle(unmergeEvent(ws, second, at(40)));
    for (const [connectionId, entityId] of [
      [ws.a, absorbed],
      [ws.b, survivor],
    ] as const) {
      const third = await keys(connectionId, entityId);
      expect(third.map((r) => r.status)).toEqual(['sent', 'sent', 'pending']);
      expect(new Set(third.map((r) => r.idempotency_key)).size).toBe(3);
    }
  });

  it('replaying the log reproduces the documents of a merge and its undo', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
    const events: StageEvent[] = [
      contactEvent(ws.workspaceId, ws.b, 'b-3', at(0), { ...inB, email: 'b3@byron.example', phone }),
      contactEvent(ws.workspaceId, ws.a, 'a-3', at(1), { ...inA, email: 'a3@analytical.example' }),
    ];
    const first = syncStage(pool);
    for (const event of events) await first.handle(event);
    const survivor = await entityOf(ws.a, 'a-3');
    const absorbed = await entityOf(ws.b, 'b-3');
    const mergeId = randomUUID();
    events.push(
      mergeEvent(ws, mergeId, survivor, absorbed, at(10)),
      contactEvent(ws.workspaceId, ws.b, 'b-3', at(15), { jobTitle: 'Analyst' }),
    );
    for (const event of events.slice(2)) await first.handle(event);
    const live = { survivor: await view(survivor), absorbed: await view(absorbed) };
    expect(live.survivor.fields).toMatchObject({ phone, jobTitle: 'Analyst' });

    // Everything derived is dropped, and the same log is read again by a fresh stage.
    const ids = [survivor, absorbed];
    for (const table of [
      'entity_doc_change',
      'entity_doc',
      'entity_synced_heads',
      'merge_conflict',
      'outbox',
    ])
      await pool.query(`DELETE FROM ${table} WHERE entity_id = ANY($1::uuid[])`, [ids]);
    await pool.query('DELETE FROM identity_operation WHERE workspace_id = $1', [ws.workspaceId]);
    await pool.query('DELETE FROM entity WHERE workspace_id = $1', [ws.workspaceId]);
    const replay = syncStage(pool);
    for (const event of events) await replay.handle(event);
    const again = { survivor: await view(survivor), absorbed: await view(absorbed) };
    expect(again.survivor.heads.sort()).toEqual(live.survivor.heads.sort());
    expect(again.survivor.fields).toEqual(live.survivor.fields);
    expect(again.survivor.provenance).toEqual(live.survivor.provenance);
    expect(again.absorbed.merged_into).toBe(survivor);
  });
});

describe('a merge of two records one HubSpot portal holds of its own', () => {
  // Two contacts in one portal, both made there (by a person, an import): another address each.
  const first = { email: 'ada@portal.example', firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'CTO' };
  const second = { email: 'augusta@portal.example', firstName: 'Ada', lastName: 'Lovelace', phone };

  const outbox = async (connectionId: string) =>
    (
      await pool.query<{
        entity_id: string;
        op: string;
        external_id: string | null;
        fields: Record<string, unknown>;
        status: string;
        idempotency_key: string;
      }>(
        `SELECT entity_id, op, external_id, fields, status, idempotency_key FROM outbox
          WHERE connection_id = $1 ORDER BY id`,
        [connectionId],
      )
    ).rows;
  const pending = async (connectionId: string) =>
    (await outbox(connectionId))
      .filter((r) => r.status === 'pending')
      .map(({ entity_id, op, external_id, fields }) => ({ entity_id, op, external_id, fields }));

  async function twoInOnePortal(n: number) {
    const ws = await seedConnections(pool, { a: 'hubspot', own: 'syncline' }, { reconciled: true });
    const stage = syncStage(pool);
    const mine = { ...first, email: `ada${n}@portal.example` };
    const theirs = { ...second, email: `augusta${n}@portal.example` };
    await stage.handle(contactEvent(ws.workspaceId, ws.a, `p-${n}`, at(0), mine));
    await stage.handle(contactEvent(ws.workspaceId, ws.a, `q-${n}`, at(1), theirs));
    const survivor = await entityOf(ws.a, `p-${n}`);
    const absorbed = await entityOf(ws.a, `q-${n}`);
    expect(absorbed).not.toBe(survivor);
    return { ws, stage, survivor, absorbed, mine, theirs, p: `p-${n}`, q: `q-${n}` };
  }

  it('owes the portal one merge, before the union it owes the record it keeps; the other record is folded', async () => {
    const { ws, stage, survivor, absorbed, mine, theirs, p, q } = await twoInOnePortal(1);
    const mergeId = randomUUID();
    await stage.handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));

    // The survivor keeps its own record in the portal; the other goes to the absorbed entity, folded.
    expect(await linksOf(survivor)).toEqual([{ connection_id: ws.a, external_id: p }]);
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.a, external_id: q }]);
    // The merge first (under the absorbed entity, keyed on the operation), then the union for the kept record.
    expect(await pending(ws.a)).toEqual([
      { entity_id: absorbed, op: 'merge', external_id: p, fields: { mergedExternalId: q } },
      { entity_id: survivor, op: 'update', external_id: p, fields: { email: theirs.email, phone } },
    ]);
    expect((await outbox(ws.a))[0]?.idempotency_key).toBe(`${absorbed}.${ws.a}.merge:${mergeId}:${q}`);
    expect((await view(survivor)).fields).toEqual({ ...mine, email: theirs.email, phone });

    // Delivered again (a redelivery the log's door missed): nothing more is owed.
    await stage.handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    expect((await pending(ws.a)).filter((r) => r.op === 'merge')).toHaveLength(1);

    // HubSpot merges; the merged-away record's late reports are nobody's: its notification, the
    // redirect HubSpot's merge notice reads as, a delete. No entity, no delete anywhere.
    await sendOwed(ws.a, at(12));
    const late = contactEvent(ws.workspaceId, ws.a, q, at(13), { jobTitle: 'Countess' });
    const redirect: StageEvent = {
      ...contactEvent(ws.workspaceId, ws.a, q, at(13), { mergedInto: p }),
      op: 'merge',
      eventKey: `contacts:${q}:merged-into:${p}`,
      origin: { partial: true },
    };
    const deleted: StageEvent = {
      ...contactEvent(ws.workspaceId, ws.a, q, at(14), {}),
      op: 'delete',
      eventKey: `contacts:${q}:deleted:${at(14).getTime()}`,
    };
    await stage.handle(late, redirect, deleted);
    const { rows: people } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM entity WHERE workspace_id = $1 AND entity_type = 'person'`,
      [ws.workspaceId],
    );
    expect(people[0]?.n).toBe(2);
    expect((await view(survivor)).fields.jobTitle).toBe('CTO');
    const { rows: flags } = await pool.query<{ flags: Record<string, unknown> }>(
      'SELECT flags FROM entity WHERE id = ANY($1::uuid[])',
      [[survivor, absorbed]],
    );
    expect(flags.every((r) => r.flags.deletedIn === undefined)).toBe(true);
    expect(await pending(ws.a)).toEqual([]);
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.a, external_id: q }]);
  });

  it('an unmerge after HubSpot merged: the restored person is owed a new record there, the survivor its own values', async () => {
    const { ws, stage, survivor, absorbed, mine, theirs, p } = await twoInOnePortal(2);
    const mergeId = randomUUID();
    await stage.handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    await sendOwed(ws.a, at(12));
    // The kept record reports the union back (our echo).
    await stage.handle(
      contactEvent(ws.workspaceId, ws.a, p, at(13), { ...mine, email: theirs.email, phone }),
    );
    expect(await pending(ws.a)).toEqual([]);

    await stage.handle(unmergeEvent(ws, mergeId, at(20)));
    // HubSpot cannot undo its merge: the old record stays gone (unlinked), a new one is owed.
    expect(await linksOf(absorbed)).toEqual([]);
    expect(await linksOf(survivor)).toEqual([{ connection_id: ws.a, external_id: p }]);
    expect((await view(absorbed)).fields).toEqual(theirs);
    expect(await pending(ws.a)).toEqual([
      { entity_id: survivor, op: 'update', external_id: p, fields: { email: mine.email, phone: null } },
      { entity_id: absorbed, op: 'create', external_id: null, fields: theirs },
    ]);
    // Sent (the push links the new record): the restored person is in step with it.
    await playPush(pool, ws.a, at(21), { linkCreates: true });
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.a, external_id: `made-for-${absorbed}` }]);
    await stage.handle(contactEvent(ws.workspaceId, ws.a, `made-for-${absorbed}`, at(22), theirs));
    expect(await pending(ws.a)).toEqual([]);
    expect((await view(absorbed)).fields).toEqual(theirs);
  });

  it('an unmerge before the merge was sent calls it off: the record comes back, nothing is made', async () => {
    const { ws, stage, survivor, absorbed, q } = await twoInOnePortal(3);
    const mergeId = randomUUID();
    await stage.handle(mergeEvent(ws, mergeId, survivor, absorbed, at(10)));
    await stage.handle(unmergeEvent(ws, mergeId, at(11)));
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.a, external_id: q }]);
    const rows = await outbox(ws.a);
    expect(rows.filter((r) => r.op === 'merge').map((r) => r.status)).toEqual(['superseded']);
    expect(rows.filter((r) => r.op === 'create')).toEqual([]);
    const { rows: flags } = await pool.query<{ flags: Record<string, unknown> }>(
      'SELECT flags FROM entity WHERE id = $1',
      [absorbed],
    );
    expect(flags[0]?.flags).not.toHaveProperty('providerMerged');
    expect(flags[0]?.flags).not.toHaveProperty('folded');
    expect(flags[0]?.flags).toMatchObject({ recreateIn: [] });
  });

  it('a stage that owes no provider merges (replay) folds the same records and queues no merge', async () => {
    const { ws, survivor, absorbed, p, q } = await twoInOnePortal(4);
    const replaying = syncStage(pool, { providerMerges: false });
    await replaying.handle(mergeEvent(ws, randomUUID(), survivor, absorbed, at(10)));
    expect(await linksOf(survivor)).toEqual([{ connection_id: ws.a, external_id: p }]);
    expect(await linksOf(absorbed)).toEqual([{ connection_id: ws.a, external_id: q }]);
    expect((await pending(ws.a)).map((r) => r.op)).toEqual(['update']);
  });

  it('a merge a person makes in HubSpot merges the two people in Syncline, and the other portal is owed the same merge', async () => {
    const ws = await seedConnections(
      pool,
      { a: 'hubspot', b: 'hubspot', own: 'syncline' },
      { reconciled: true },
    );
    const stage = syncStage(pool);
    const mine = { ...first, email: 'ada7@portal.example' };
    const theirs = { ...second, email: 'augusta7@portal.example' };
    // Both CRMs hold both contacts: two people in Syncline, each linked in A and B.
    await stage.handle(
      contactEvent(ws.workspaceId, ws.a, 'p-7', at(0), mine),
      contactEvent(ws.workspaceId, ws.a, 'q-7', at(1), theirs),
      contactEvent(ws.workspaceId, ws.b, 'p-b7', at(2), mine),
      contactEvent(ws.workspaceId, ws.b, 'q-b7', at(3), theirs),
    );
    const survivor = await entityOf(ws.a, 'p-7');
    const absorbed = await entityOf(ws.a, 'q-7');
    expect(absorbed).not.toBe(survivor);
    expect(await entityOf(ws.b, 'q-b7')).toBe(absorbed);
    await sendOwed(ws.a, at(4));
    await sendOwed(ws.b, at(4));

    // Someone merges q-7 into p-7 in HubSpot A: its notice reads as a redirect of q-7.
    const notice: StageEvent = {
      ...contactEvent(ws.workspaceId, ws.a, 'q-7', at(10), { mergedInto: 'p-7' }),
      op: 'merge',
      eventKey: 'contacts:q-7:merged-into:p-7',
      origin: { partial: true },
    };
    await stage.handle(notice);
    expect((await view(absorbed)).merged_into).toBe(survivor);
    // The union (which address wins is the email policy's to say, between two edits of other times).
    const merged = (await view(survivor)).fields;
    expect(merged).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'CTO', phone });
    expect([mine.email, theirs.email]).toContain(merged.email);
    // B holds both as its own contacts: it is owed HubSpot's merge of them first, then the union
    // for the contact it keeps.
    const owedB = await pending(ws.b);
    expect(owedB[0]).toEqual({
      entity_id: absorbed,
      op: 'merge',
      external_id: 'p-b7',
      fields: { mergedExternalId: 'q-b7' },
    });
    expect(owedB.slice(1).map((r) => [r.entity_id, r.op, r.external_id])).toEqual([
      [survivor, 'update', 'p-b7'],
    ]);
    // A merged them itself: what it is owed names the merge it made (the connector finds it done).
    expect((await pending(ws.a)).filter((r) => r.op === 'merge')).toEqual([
      { entity_id: absorbed, op: 'merge', external_id: 'p-7', fields: { mergedExternalId: 'q-7' } },
    ]);
    const { rows: operations } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM identity_operation WHERE payload->>'workspaceId' = $1`,
      [ws.workspaceId],
    );
    expect(operations[0]?.n).toBe(1);

    // Delivered again: one operation, one merge owed to each portal.
    await stage.handle({ ...notice });
    const { rows: again } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM identity_operation WHERE payload->>'workspaceId' = $1`,
      [ws.workspaceId],
    );
    expect(again[0]?.n).toBe(1);
    expect((await outbox(ws.b)).filter((r) => r.op === 'merge')).toHaveLength(1);
    expect((await outbox(ws.a)).filter((r) => r.op === 'merge')).toHaveLength(1);

    // B's merge, once made, comes back as B's own notice: the echo of our merge, nothing more.
    await sendOwed(ws.b, at(12));
    await stage.handle({
      ...contactEvent(ws.workspaceId, ws.b, 'q-b7', at(13), { mergedInto: 'p-b7' }),
      op: 'merge',
      eventKey: 'contacts:q-b7:merged-into:p-b7',
      origin: { partial: true },
    });
    const { rows: after } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM identity_operation WHERE payload->>'workspaceId' = $1`,
      [ws.workspaceId],
    );
    expect(after[0]?.n).toBe(1);
    expect(await pending(ws.b)).toEqual([]);
  });

  it('two records of one Google calendar stay linked: only a provider that merges is asked to', async () => {
    const ws = await seedConnections(pool, { cal: 'google-calendar', own: 'syncline' });
    const stage = syncStage(pool);
    const meeting = (id: string, s: number, title: string): StageEvent => ({
      ...contactEvent(ws.workspaceId, ws.cal, id, at(s), { title, startAt: at(100).toISOString() }),
      entityType: 'meeting',
      eventKey: `events:${id}:${s}`,
    });
    await stage.handle(meeting('ev-1', 0, 'Kickoff'), meeting('ev-2', 1, 'Kick-off'));
    const survivor = await entityOf(ws.cal, 'ev-1');
    const absorbed = await entityOf(ws.cal, 'ev-2');
    if (survivor === absorbed) return; // matched already: nothing to merge
    await stage.handle(
      operation(
        {
          kind: 'merge',
          operationId: randomUUID(),
          workspaceId: ws.workspaceId,
          entityType: 'meeting',
          survivorId: survivor,
          absorbedId: absorbed,
        },
        ws.own,
        at(10),
      ),
    );
    expect((await linksOf(survivor)).map((l) => l.external_id)).toEqual(['ev-1', 'ev-2']);
    expect((await pending(ws.cal)).filter((r) => r.op === 'merge')).toEqual([]);
  });
});
