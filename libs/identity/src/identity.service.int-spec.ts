import { randomUUID } from 'node:crypto';
import { inTransaction, type Queryable } from '@syncline/core';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { type IdentityChange, IdentityService } from './identity.service';
import type { IdentitySettings } from './match-record';
import { dismissOperationId, identityOperationChange, type MergeIntent } from './operations';
import { seedWorkspace as seedWorkspaceWith } from './testing/seed-workspace';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('identity');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const inTx = <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => inTransaction(pool, fn);

async function seedWorkspace() {
  const { workspaceId, connections } = await seedWorkspaceWith(pool, {
    gmail: 'gmail',
    hubspotA: 'hubspot',
    hubspotB: 'hubspot',
  });
  return { workspaceId, ...connections };
}

/** An upsert of a record of one type, as the log carries it. */
const upsertOf =
  (entityType: IdentityChange['entityType']) =>
  (
    workspaceId: string,
    connectionId: string,
    externalId: string,
    fields: Record<string, unknown>,
  ): IdentityChange => ({
    workspaceId,
    connectionId,
    entityType,
    externalId,
    op: 'upsert',
    fields,
  });
const person = upsertOf('person');
const dealChange = upsertOf('deal');

/** Everything identity stores for a workspace, in a stable order, without timestamps. */
async function snapshot(workspaceId: string) {
  const q = async (sql: string) => (await pool.query(sql, [workspaceId])).rows;
  return {
    entities: await q(
      'SELECT id, entity_type, display_name, match_keys, merged_into FROM entity WHERE workspace_id = $1 ORDER BY id',
    ),
    links: await q(
      `SELECT connection_id, entity_type, external_id, entity_id FROM source_link WHERE workspace_id = $1
        ORDER BY connection_id, entity_type, external_id`,
    ),
    keys: await q(
      'SELECT kind, value, entity_id FROM match_key WHERE workspace_id = $1 ORDER BY kind, value, entity_id',
    ),
    duplicates: await q(
      'SELECT id, entity_a, entity_b, score, evidence, status FROM possible_duplicate WHERE workspace_id = $1 ORDER BY id',
    ),
  };
}

const US: Partial<IdentitySettings> = { defaultCountry: 'US' };

describe('IdentityService on Postgres', () => {
  it("one batch: linked records' keys, names and blocks stored together, and seen by a later record of the batch that matches on them", async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    await inTx((tx) =>
      identity.handle(tx, [person(ws.workspaceId, ws.hubspotA, 'a-1', { email: 'kim@initech.example' })]),
    );
    const [entity] = (await snapshot(ws.workspaceId)).entities;
    // A's record comes back twice in one batch, gaining a name, then a second address and a
    // phone; B's record (a new one) carries only that second address: it must find Kim.
    await inTx((tx) =>
      identity.handle(tx, [
        person(ws.workspaceId, ws.hubspotA, 'a-1', {
          email: 'kim@initech.example',
          firstName: 'Kim',
          lastName: 'Lee',
        }),
        person(ws.workspaceId, ws.hubspotA, 'a-1', {
          email: 'kim@initech.example',
          emails: ['kim.lee@initech.example'],
          firstName: 'Kimberly',
          lastName: 'Lee',
          phone: '(415) 555-0100',
        }),
        person(ws.workspaceId, ws.hubspotB, 'b-1', { email: 'KIM.LEE@initech.example' }),
      ]),
    );
    const after = await snapshot(ws.workspaceId);
    expect(after.entities).toHaveLength(1);
    expect(after.links.map((l) => l.entity_id)).toEqual([entity.id, entity.id]);
    expect([...after.entities[0].match_keys.names].sort()).toEqual(['kim lee', 'kimberly lee']);
    expect(after.keys.map((k) => `${k.kind}:${k.value}`)).toEqual(
      expect.arrayContaining([
        'email:kim@initech.example',
        'email:kim.lee@initech.example',
        'phone:+14155550100',
      ]),
    );
  });

  it('Gmail bare address, then HubSpot A, then HubSpot B with other case and formatting: one person, three links', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    await inTx((tx) =>
      identity.handle(tx, [
        {
          workspaceId: ws.workspaceId,
          connectionId: ws.gmail,
          entityType: 'email_activity',
          externalId: 'msg-1',
          op: 'upsert',
          fields: { messageId: '<m1@mail.gmail.com>', from: 'ana.lima@acme.com', to: ['me@syncline.test'] },
        },
      ]),
    );
    const a = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'contact-1', {
          email: 'ana.lima@acme.com',
          firstName: 'Ana',
          lastName: 'Lima',
          phone: '+1 415 555 0132',
        }),
      ),
    );
    expect(a).toMatchObject({ decision: 'linked-deterministic', evidence: ['email:ana.lima@acme.com'] });
    const b = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, '901', { email: '  Ana.Lima@ACME.com', phone: '(415) 555-0132' }),
      ),
    );
    expect(b?.entityId).toBe(a?.entityId);

    const links = await inTx((tx) => identity.linksOf(tx, a!.entityId));
    expect(links.map((l) => [l.connectionId, l.externalId]).sort()).toEqual(
      [
        [ws.gmail, 'mailto:ana.lima@acme.com'],
        [ws.hubspotA, 'contact-1'],
        [ws.hubspotB, '901'],
      ].sort(),
    );
    const people = await pool.query(
      "SELECT id FROM entity WHERE workspace_id = $1 AND entity_type = 'person'",
      [ws.workspaceId],
    );
    // The recipient me@syncline.test is a person of its own; Ana is exactly one.
    expect(people.rows).toHaveLength(2);
    const keys = await pool.query(
      'SELECT kind, value FROM match_key WHERE entity_id = $1 ORDER BY kind, value',
      [a!.entityId],
    );
    expect(keys.rows).toEqual([
      { kind: 'email', value: 'ana.lima@acme.com' },
      { kind: 'phone', value: '+14155550132' },
      { kind: 'phone_name', value: '4155550132|ana|lima' },
    ]);
    // A redelivery of the same record is recognised by its link.
    const again = await inTx((tx) =>
      identity.resolveChange(tx, person(ws.workspaceId, ws.hubspotB, '901', { email: 'ana.lima@acme.com' })),
    );
    expect(again).toMatchObject({ entityId: a!.entityId, decision: 'linked-existing' });
  });

  it('merge then unmerge, as log events, restores both entities and their links exactly', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    const ana = await inTx(async (tx) => {
      await identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.gmail, 'mailto:ana.lima@acme.com', { email: 'ana.lima@acme.com' }),
      );
      return identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'contact-1', { email: 'ana.lima@acme.com', name: 'Ana Lima' }),
      );
    });
    // Same name, nothing else in common: a second entity and a possible duplicate.
    const other = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, '77', { email: 'analima77@gmail.com', name: 'Ana Lima' }),
      ),
    );
    expect(other?.decision).toBe('created-with-possible-duplicate');
    const [review] = await inTx((tx) => identity.possibleDuplicates(tx, ws.workspaceId));
    expect(review).toMatchObject({ entityA: other!.entityId, entityB: ana!.entityId, status: 'open' });

    const before = await snapshot(ws.workspaceId);
    const merge: MergeIntent = {
      kind: 'merge',
      operationId: randomUUID(),
      workspaceId: ws.workspaceId,
      entityType: 'person',
      survivorId: ana!.entityId,
      absorbedId: other!.entityId,
    };
    const asEvent = (change: ReturnType<typeof identityOperationChange>): IdentityChange => ({
      ...change,
      entityType: change.entityType as IdentityChange['entityType'],
      op: 'merge',
      fields: change.fields ?? {},
    });
    const mergeEvent = asEvent(identityOperationChange(merge, ws.hubspotA));
    await inTx((tx) => identity.handle(tx, [mergeEvent]));
    const merged = await snapshot(ws.workspaceId);
    expect(merged.links.filter((l) => l.entity_id === other!.entityId)).toEqual([]);
    expect(merged.links.filter((l) => l.entity_id === ana!.entityId)).toHaveLength(3);
    expect(merged.entities.find((e) => e.id === other!.entityId)?.merged_into).toBe(ana!.entityId);
    expect(merged.duplicates[0]?.status).toBe('merged');
    expect(await inTx((tx) => identity.entity(tx, other!.entityId))).toMatchObject({
      mergedInto: ana!.entityId,
    });
    // A redelivered operation is a no-op.
    await inTx((tx) => identity.handle(tx, [mergeEvent]));

    const unmergeId = randomUUID();
    await inTx((tx) =>
      identity.handle(tx, [
        asEvent(
          identityOperationChange(
            {
              kind: 'unmerge',
              operationId: unmergeId,
              workspaceId: ws.workspaceId,
              entityType: 'person',
              undoes: merge.operationId,
            },
            ws.hubspotA,
          ),
        ),
      ]),
    );
    const after = await snapshot(ws.workspaceId);
    expect(after.links).toEqual(before.links);
    expect(after.keys).toEqual(before.keys);
    expect(after.entities).toEqual(before.entities);
    expect(after.duplicates).toEqual(before.duplicates);
    const ops = await pool.query(
      'SELECT kind, undone_at FROM identity_operation WHERE workspace_id = $1 ORDER BY kind',
      [ws.workspaceId],
    );
    expect(ops.rows.map((r) => [r.kind, r.undone_at !== null])).toEqual([
      ['merge', true],
      ['unmerge', false],
    ]);
    // The absorbed entity's own email finds it again.
    const viaAbsorbed = await inTx((tx) =>
      identity.resolveChange(tx, person(ws.workspaceId, ws.hubspotB, '78', { email: 'analima77@gmail.com' })),
    );
    expect(viaAbsorbed?.entityId).toBe(other!.entityId);
    // Undoing twice is refused.
    const twice = await inTx((tx) =>
      identity.applyOperation(tx, {
        kind: 'unmerge',
        operationId: randomUUID(),
        workspaceId: ws.workspaceId,
        entityType: 'person',
        undoes: merge.operationId,
      }),
    );
    expect(twice).toMatchObject({ ok: false, error: { code: 'Conflict' } });
  });

  it('a record naming two people someone kept apart (a merge undone, a pair dismissed) joins neither into the other', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    const resolve = (change: IdentityChange) => inTx((tx) => identity.resolveChange(tx, change));
    const asEvent = (change: ReturnType<typeof identityOperationChange>): IdentityChange => ({
      ...change,
      entityType: change.entityType as IdentityChange['entityType'],
      op: 'merge',
      fields: change.fields ?? {},
    });
    const twoOf = async (name: string, first: string, second: string) => {
      const a = await resolve(person(ws.workspaceId, ws.hubspotA, `${first}-a`, { email: first, name }));
      const b = await resolve(person(ws.workspaceId, ws.hubspotB, `${second}-b`, { email: second, name }));
      expect(b?.entityId).not.toBe(a?.entityId);
      return { a: a!.entityId, b: b!.entityId };
    };
    const mergedInto = async (id: string) =>
      (await pool.query('SELECT merged_into FROM entity WHERE id = $1', [id])).rows[0]?.merged_into ?? null;

    // Merged by a person (the survivor either way round), then unmerged.
    const undone = await twoOf('Ana Lima', 'ana@acme.com', 'ana.lima@fastmail.example');
    const merge: MergeIntent = {
      kind: 'merge',
      operationId: randomUUID(),
      workspaceId: ws.workspaceId,
      entityType: 'person',
      survivorId: undone.b,
      absorbedId: undone.a,
      requestedBy: 'key-1',
    };
    await inTx((tx) => identity.handle(tx, [asEvent(identityOperationChange(merge, ws.hubspotA))]));
    await inTx((tx) =>
      identity.handle(tx, [
        asEvent(
          identityOperationChange(
            {
              kind: 'unmerge',
              operationId: randomUUID(),
              workspaceId: ws.workspaceId,
              entityType: 'person',
              undoes: merge.operationId,
            },
            ws.hubspotA,
          ),
        ),
      ]),
    );
    // Dismissed as not the same.
    const dismissed = await twoOf('Boris Stone', 'boris@beta.io', 'boris.stone@fastmail.example');
    const [pair] = (await inTx((tx) => identity.possibleDuplicates(tx, ws.workspaceId))).filter((d) =>
      [d.entityA, d.entityB].includes(dismissed.a),
    );
    expect(pair).toBeDefined();
    await inTx((tx) =>
      identity.handle(tx, [
        asEvent(
          identityOperationChange(
            {
              kind: 'dismiss',
              operationId: dismissOperationId(ws.workspaceId, pair!.id),
              workspaceId: ws.workspaceId,
              entityType: 'person',
              duplicateId: pair!.id,
              requestedBy: 'key-1',
            },
            ws.hubspotA,
          ),
        ),
      ]),
    );
    // Nobody decided on this pair: a record naming both joins them.
    const free = await twoOf('Cleo Park', 'cleo@acme.com', 'cleo.park@fastmail.example');

    const before = await snapshot(ws.workspaceId);
    // A notification naming both (one property each, as our own create's come) says nothing of
    // which one it is: it links nowhere until its full record or its receipt does.
    const notified = await resolve({
      ...person(ws.workspaceId, ws.hubspotB, 'notified', {
        emails: ['ana@acme.com', 'ana.lima@fastmail.example'],
      }),
      partial: true,
    });
    expect(notified).toBeUndefined();
    expect((await snapshot(ws.workspaceId)).links).toEqual(before.links);
    for (const [name, first, second] of [
      ['Ana Lima', 'ana@acme.com', 'ana.lima@fastmail.example'],
      ['Boris Stone', 'boris@beta.io', 'boris.stone@fastmail.example'],
    ] as const) {
      const both = await resolve(
        person(ws.workspaceId, ws.gmail, `both-${first}`, { emails: [first, second], name }),
      );
      expect(both).toMatchObject({ decision: 'linked-deterministic', absorbs: [] });
    }
    for (const id of [undone.a, undone.b, dismissed.a, dismissed.b]) expect(await mergedInto(id)).toBeNull();
    const after = await snapshot(ws.workspaceId);
    const identities = (rows: typeof before.entities) => rows.map((e) => [e.id, e.merged_into]);
    expect(identities(after.entities)).toEqual(identities(before.entities));
    expect(after.duplicates).toEqual(before.duplicates);
    // In a fresh process too (its index read from the database).
    const fresh = await inTx((tx) =>
      new IdentityService({ settings: () => US }).resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, 'both-again', {
          emails: ['ana.lima@fastmail.example', 'ana@acme.com'],
          name: 'Ana Lima',
        }),
      ),
    );
    expect(fresh?.absorbs).toEqual([]);
    expect(await mergedInto(undone.a)).toBeNull();

    // Neither took the other's address from the records naming both: each address still names
    // one of them alone.
    const holdersOf = async (email: string) =>
      (
        await pool.query<{ entity_id: string }>(
          `SELECT entity_id FROM match_key WHERE workspace_id = $1 AND kind = 'email' AND value = $2`,
          [ws.workspaceId, email],
        )
      ).rows.map((r) => r.entity_id);
    expect(await holdersOf('ana@acme.com')).toEqual([undone.a]);
    expect(await holdersOf('ana.lima@fastmail.example')).toEqual([undone.b]);
    // Nor from an echo: the merge wrote Ana's first address to her second record, and its
    // report came after the unmerge.
    const echoed = await resolve(
      person(ws.workspaceId, ws.hubspotB, 'ana.lima@fastmail.example-b', {
        emails: ['ana.lima@fastmail.example', 'ana@acme.com'],
        name: 'Ana Lima',
      }),
    );
    expect(echoed?.entityId).toBe(undone.b);
    expect(await holdersOf('ana@acme.com')).toEqual([undone.a]);
    const onlyFirst = await resolve(person(ws.workspaceId, ws.gmail, 'only-ana', { email: 'ana@acme.com' }));
    expect(onlyFirst).toMatchObject({ entityId: undone.a, decision: 'linked-deterministic', absorbs: [] });
    // A key both hold all the same (stored before either was kept from taking it) cannot say
    // which of them a record bearing it alone is: a person of its own, put up for review beside
    // both, in this process and a fresh one (whose index lists the holders in another order).
    await pool.query(
      `INSERT INTO match_key (workspace_id, entity_type, kind, value, entity_id) VALUES ($1, 'person', 'email', $2, $3)`,
      [ws.workspaceId, 'ana.lima@fastmail.example', undone.a],
    );
    identity.forget();
    for (const [n, service] of [
      [1, identity],
      [2, new IdentityService({ settings: () => US })],
    ] as const) {
      const only = await inTx((tx) =>
        service.resolveChange(
          tx,
          person(ws.workspaceId, ws.gmail, `only-second-${n}`, { email: 'ana.lima@fastmail.example' }),
        ),
      );
      expect(only?.decision).toBe('created-with-possible-duplicate');
      expect([undone.a, undone.b]).not.toContain(only?.entityId);
      // Beside both (and, the second time, beside the person the first one made).
      expect(only?.possibleDuplicates.map((d) => d.entityId)).toEqual(
        expect.arrayContaining([undone.a, undone.b]),
      );
      expect(only?.possibleDuplicates).toHaveLength(1 + n);
      expect(only?.absorbs).toEqual([]);
    }
    for (const id of [undone.a, undone.b]) expect(await mergedInto(id)).toBeNull();
    // Nor are two people someone kept apart made one through a third: a record naming a third
    // person first, then both Borises, joins one of them at most.
    const third = await resolve(
      person(ws.workspaceId, ws.gmail, 'boris-third', { email: 'b.stone@third.example' }),
    );
    const through = await resolve(
      person(ws.workspaceId, ws.hubspotA, 'boris-all', {
        emails: ['b.stone@third.example', 'boris@beta.io', 'boris.stone@fastmail.example'],
      }),
    );
    expect(through?.entityId).toBe(third?.entityId);
    expect(through?.absorbs).toHaveLength(1);
    const rootOf = async (id: string): Promise<string> => {
      const into = await mergedInto(id);
      return into === null ? id : rootOf(into);
    };
    expect(await rootOf(dismissed.a)).not.toBe(await rootOf(dismissed.b));

    const joined = await resolve(
      person(ws.workspaceId, ws.gmail, 'both-cleo', {
        emails: ['cleo@acme.com', 'cleo.park@fastmail.example'],
        name: 'Cleo Park',
      }),
    );
    expect(joined?.absorbs).toHaveLength(1);
    expect([await mergedInto(free.a), await mergedInto(free.b)].filter((m) => m !== null)).toHaveLength(1);
  });

  it('rebuilds its index from the database after a restart, for deterministic matches and review', async () => {
    const ws = await seedWorkspace();
    const first = new IdentityService({ settings: () => US });
    const ana = await inTx((tx) =>
      first.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'c-1', {
          email: 'ana.lima@acme.com',
          firstName: 'Ana',
          lastName: 'Lima',
        }),
      ),
    );
    const restarted = new IdentityService({ settings: () => US });
    const byEmail = await inTx((tx) =>
      restarted.resolveChange(tx, person(ws.workspaceId, ws.hubspotB, 'x-1', { email: 'ANA.LIMA@acme.com' })),
    );
    expect(byEmail).toMatchObject({ entityId: ana!.entityId, decision: 'linked-deterministic' });
    const byName = await inTx((tx) =>
      new IdentityService({ settings: () => US }).resolveChange(
        tx,
        // A third connection: the entity already has a HubSpot B record of another address.
        person(ws.workspaceId, ws.gmail, 'x-2', { email: 'a.lima@acme.com', name: 'Ana Lmia' }),
      ),
    );
    expect(byName).toMatchObject({ decision: 'created-with-possible-duplicate' });
    expect(byName?.possibleDuplicates.map((c) => c.entityId)).toEqual([ana!.entityId]);
  });

  it('a rolled-back link leaves nothing behind that a later decision could link to', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    await expect(
      inTx(async (tx) => {
        await identity.resolveChange(
          tx,
          person(ws.workspaceId, ws.hubspotA, 'c-1', { email: 'ana@acme.com', name: 'Ana Lima' }),
        );
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash');
    const next = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, 'c-2', { email: 'ana@acme.com', name: 'Ana Lima' }),
      ),
    );
    expect(next?.decision).toBe('created');
  });

  it('a rolled-back entity is no candidate for a later fuzzy match either', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService({ settings: () => US });
    await expect(
      inTx(async (tx) => {
        await identity.handle(tx, [
          person(ws.workspaceId, ws.hubspotA, 'f-1', { email: 'ana@acme.com', name: 'Ana Lima' }),
        ]);
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash');
    // By name at the same domain, it would have joined the rolled-back entity.
    const next = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.gmail, 'f-2', { email: 'a.lima@acme.com', name: 'Ana Lmia' }),
      ),
    );
    expect(next?.decision).toBe('created');
    const { rows } = await pool.query('SELECT 1 FROM entity WHERE id = $1', [next!.entityId]);
    expect(rows).toHaveLength(1);
  });

  it('participants: unknown addresses become people or stay bare, by the workspace setting', async () => {
    const creating = await seedWorkspace();
    const bare = await seedWorkspace();
    const identity = new IdentityService({
      settings: (id) => (id === bare.workspaceId ? { participants: 'bare-address' } : {}),
    });
    const attendees = [{ email: 'Lee@Example.com', displayName: 'Lee' }, { email: 'kim@example.com' }];
    const created = await inTx((tx) =>
      identity.resolveParticipants(
        tx,
        { workspaceId: creating.workspaceId, connectionId: creating.gmail },
        attendees,
      ),
    );
    expect(created.map((p) => p.email)).toEqual(['lee@example.com', 'kim@example.com']);
    expect(created.every((p) => p.personId !== null)).toBe(true);

    // Bare: a known person resolves, an unknown address stays an address and writes nothing.
    const kim = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(bare.workspaceId, bare.hubspotA, 'c-9', { email: 'kim@example.com', name: 'Kim' }),
      ),
    );
    const resolved = await inTx((tx) =>
      identity.resolveParticipants(
        tx,
        { workspaceId: bare.workspaceId, connectionId: bare.gmail },
        attendees,
      ),
    );
    expect(resolved).toEqual([
      { email: 'lee@example.com', personId: null },
      { email: 'kim@example.com', personId: kim!.entityId },
    ]);
    const count = await pool.query('SELECT count(*)::int AS n FROM entity WHERE workspace_id = $1', [
      bare.workspaceId,
    ]);
    expect(count.rows[0].n).toBe(1);

    // Through the consumer path: a meeting's attendees and organizer.
    await inTx((tx) =>
      identity.handle(tx, [
        {
          workspaceId: creating.workspaceId,
          connectionId: creating.gmail,
          entityType: 'meeting',
          externalId: 'evt-1',
          op: 'upsert',
          fields: { iCalUID: 'evt-1@google.com', organizer: { email: 'org@example.com' }, attendees },
        },
      ]),
    );
    const people = await pool.query(
      "SELECT count(*)::int AS n FROM entity WHERE workspace_id = $1 AND entity_type = 'person'",
      [creating.workspaceId],
    );
    expect(people.rows[0].n).toBe(3);
  });
  it('deals: the same deal in two CRMs is one entity; two of one name in one CRM stay two, after a restart too', async () => {
    const ws = await seedWorkspace();
    const change = (connectionId: string, externalId: string, fields: Record<string, unknown>) =>
      dealChange(ws.workspaceId, connectionId, externalId, fields);
    const deal = { name: 'Acme — Platform 2026', amount: 12500, closeDate: '2026-03-01T17:00:00.000Z' };
    const a = await inTx((tx) =>
      new IdentityService().resolveChange(
        tx,
        change(ws.hubspotA, 'd-1', { ...deal, ownerId: '1', stage: 's1' }),
      ),
    );
    // Same name and close day in the same CRM, another amount: another deal.
    const twin = await inTx((tx) =>
      new IdentityService().resolveChange(tx, change(ws.hubspotA, 'd-2', { ...deal, amount: 9000 })),
    );
    expect(twin?.entityId).not.toBe(a?.entityId);
    expect(twin?.decision).toBe('created-with-possible-duplicate');
    // A fresh process: connections and facts come from the database.
    const b = await inTx((tx) =>
      new IdentityService().resolveChange(
        tx,
        change(ws.hubspotB, '900', {
          name: 'ACME - platform 2026',
          amount: '12500',
          ownerId: '9',
          stage: 'x',
        }),
      ),
    );
    expect(b).toMatchObject({ entityId: a!.entityId, decision: 'linked-deterministic' });
    const other = await inTx((tx) =>
      new IdentityService().resolveChange(tx, change(ws.hubspotB, '901', { ...deal, amount: 99 })),
    );
    expect([a!.entityId, twin!.entityId]).not.toContain(other?.entityId);
  });

  it('deals: a CRM whose record an unmerge took back no longer holds the deal; a warm process decides as a fresh one', async () => {
    const ws = await seedWorkspace();
    const change = (connectionId: string, externalId: string, fields: Record<string, unknown>) =>
      dealChange(ws.workspaceId, connectionId, externalId, fields);
    const deal = { name: 'Acme — Platform 2026', amount: 12500 };
    const warm = new IdentityService();
    const a = await inTx((tx) => warm.resolveChange(tx, change(ws.hubspotA, 'd-1', deal)));
    const b = await inTx((tx) =>
      warm.resolveChange(tx, change(ws.hubspotB, '800', { name: 'Acme renewal', amount: 700 })),
    );
    const operationId = randomUUID();
    const intent = { workspaceId: ws.workspaceId, entityType: 'deal' as const };
    await inTx((tx) =>
      warm.applyOperation(tx, {
        ...intent,
        kind: 'merge',
        operationId,
        survivorId: a!.entityId,
        absorbedId: b!.entityId,
      }),
    );
    // While merged, B holds A's deal: a second B deal of its name and amount is another deal.
    const whileMerged = await inTx((tx) => warm.resolveChange(tx, change(ws.hubspotB, '801', deal)));
    expect(whileMerged?.entityId).not.toBe(a!.entityId);
    await inTx((tx) =>
      warm.applyOperation(tx, { ...intent, kind: 'unmerge', operationId: randomUUID(), undoes: operationId }),
    );
    // B's record went back: B holds A's deal no more, and a B deal of its name and amount is it,
    // for a fresh process and for the one that saw B's record on it (each decision taken back).
    const decide = async (identity: IdentityService) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        return await identity.resolveChange(client, change(ws.hubspotB, '902', deal));
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    };
    const fresh = await decide(new IdentityService());
    expect(fresh).toMatchObject({ entityId: a!.entityId, decision: 'linked-deterministic' });
    expect(await decide(warm)).toEqual(fresh);
  });

  it('meetings: a meeting logged in HubSpot is the calendar event, by title and start minute', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService();
    const meeting = (
      connectionId: string,
      externalId: string,
      fields: Record<string, unknown>,
    ): IdentityChange => ({
      workspaceId: ws.workspaceId,
      connectionId,
      entityType: 'meeting',
      externalId,
      op: 'upsert',
      fields,
    });
    const logged = await inTx((tx) =>
      identity.resolveChange(
        tx,
        meeting(ws.hubspotA, 'hm-1', { title: 'Discovery call: Acme', startAt: '2026-12-01T10:00:00.000Z' }),
      ),
    );
    const event = await inTx((tx) =>
      new IdentityService().resolveChange(
        tx,
        meeting(ws.gmail, 'evt-1', {
          iCalUID: 'evt-1@google.com',
          title: 'Discovery Call – ACME',
          startAt: '2026-12-01T10:00:00.000Z',
        }),
      ),
    );
    expect(event).toMatchObject({ entityId: logged!.entityId, decision: 'linked-deterministic' });
    const again = await inTx((tx) =>
      identity.resolveChange(
        tx,
        meeting(ws.hubspotA, 'hm-2', { title: 'Discovery call: Acme', startAt: '2026-12-01T10:00:00.000Z' }),
      ),
    );
    expect(again?.entityId).not.toBe(logged!.entityId);
  });

  it('300 people with different emails and similar names stay 300 entities, whatever the order and process', async () => {
    const ws = await seedWorkspace();
    const first = [
      'Ada',
      'Bao',
      'Chiara',
      'Dmitri',
      'Emeka',
      'Fatima',
      'Goran',
      'Hana',
      'Ines',
      'Jonas',
    ].concat(['Kwame', 'Leila', 'Mateo', 'Noor', 'Olga', 'Pita', 'Quentin', 'Rania', 'Sven', 'Tomoko']);
    const last = [
      'Abara',
      'Berg',
      'Castillo',
      'Dubois',
      'Eriksen',
      'Fujita',
      'Gallo',
      'Haddad',
      'Ivanova',
      'Jensen',
    ].concat([
      'Kaur',
      'Lindqvist',
      'Moreau',
      'Nakamura',
      'Okafor',
      'Petrov',
      'Quispe',
      'Rossi',
      'Sato',
      'Tanaka',
    ]);
    // The chaos e2e population: HubSpot contacts, one email each, names from two short lists.
    const fieldsOf = (i: number) => ({
      email: `person${i}@chaos.example`,
      firstName: first[i % 20],
      lastName: last[Math.floor(i / 20) % 20],
      phone: null,
      company: null,
    });
    // Two processes, as two workers would be, each with its own cache; every record is later
    // copied into the other CRM (same email, another id).
    const workers = [new IdentityService(), new IdentityService()];
    const order = Array.from({ length: 300 }, (_, i) => i).sort(
      (a, b) => ((a * 7919) % 300) - ((b * 7919) % 300),
    );
    const decisions = new Map<string, number>();
    for (const [n, i] of order.entries()) {
      const home = i % 3 === 0 ? ws.hubspotB : ws.hubspotA;
      const r = await inTx((tx) =>
        workers[n % 2]!.resolveChange(tx, person(ws.workspaceId, home, `c-${i}`, fieldsOf(i))),
      );
      decisions.set(r!.decision, (decisions.get(r!.decision) ?? 0) + 1);
    }
    for (const [n, i] of order.entries()) {
      const other = i % 3 === 0 ? ws.hubspotA : ws.hubspotB;
      const r = await inTx((tx) =>
        workers[(n + 1) % 2]!.resolveChange(tx, person(ws.workspaceId, other, `copy-${i}`, fieldsOf(i))),
      );
      expect(r).toMatchObject({
        decision: 'linked-deterministic',
        evidence: [`email:person${i}@chaos.example`],
      });
    }
    expect(decisions.get('linked-fuzzy') ?? 0).toBe(0);
    expect(decisions.get('linked-deterministic') ?? 0).toBe(0);
    const { rows } = await pool.query<{ n: number; links: number }>(
      `SELECT count(DISTINCT e.id)::int AS n, max(l.c)::int AS links FROM entity e
         JOIN (SELECT entity_id, count(*) AS c FROM source_link GROUP BY entity_id) l ON l.entity_id = e.id
        WHERE e.workspace_id = $1 AND e.entity_type = 'person'`,
      [ws.workspaceId],
    );
    expect(rows[0]).toEqual({ n: 300, links: 2 });
  });

  it('a name never links two records of one connection, even in a fresh process; they go to review', async () => {
    const ws = await seedWorkspace();
    const a = await inTx((tx) =>
      new IdentityService().resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'c-1', {
          email: 'ana@acme.com',
          firstName: 'Ana',
          lastName: 'Lima',
        }),
      ),
    );
    const identity = new IdentityService();
    const twin = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'c-2', {
          email: 'ana.lima@acme.com',
          firstName: 'Ana',
          lastName: 'Lima',
        }),
      ),
    );
    expect(twin).toMatchObject({ decision: 'created-with-possible-duplicate' });
    expect(twin?.entityId).not.toBe(a?.entityId);
    expect(twin?.possibleDuplicates.map((c) => c.entityId)).toEqual([a!.entityId]);
    const other = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, 'x-1', {
          email: 'a.lima@acme.com',
          firstName: 'Ana',
          lastName: 'Lima',
        }),
      ),
    );
    // Nor from another CRM: a name is evidence for review, never a link.
    expect(other?.decision).toBe('created-with-possible-duplicate');
    expect([a!.entityId, twin!.entityId]).not.toContain(other?.entityId);
    // Two records of one CRM, whichever process decided: the twin's evidence says so (the fresh
    // process had not seen c-1 linked; a replay or a restart must tell the same), the other's not.
    expect(twin?.possibleDuplicates[0]?.evidence).toContain('same-connection');
    expect(twin?.evidence).toContain('same-connection');
    const ofOther = other?.possibleDuplicates.find((c) => c.entityId === a!.entityId);
    expect(ofOther?.evidence).not.toContain('same-connection');
  });

  it("a notification's name fragment is no name: another person of that first name at the domain stays another person", async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService();
    // B's contact arrives through its creation notifications, one property each.
    const notified = (fields: Record<string, unknown>) => ({
      ...person(ws.workspaceId, ws.hubspotB, 'b-30', fields),
      partial: true,
    });
    // Known by its address already (a mail to them): the notifications link to that person.
    const known = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.gmail, 'g-30', { email: 'person30@chaos.example' }),
      ),
    );
    const inB = await inTx((tx) => identity.resolveChange(tx, notified({ email: 'person30@chaos.example' })));
    expect(inB?.entityId).toBe(known?.entityId);
    await inTx((tx) => identity.resolveChange(tx, notified({ firstName: 'Kwame' })));
    await inTx((tx) => identity.resolveChange(tx, notified({ lastName: 'Okafor' })));
    const stored = (await snapshot(ws.workspaceId)).entities.find((e) => e.id === inB?.entityId);
    expect(stored?.match_keys).toEqual({ names: [], blocks: [] });
    // A's Kwame Berg, another address at the same domain, is someone else.
    const other = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotA, 'a-290', {
          email: 'person290@chaos.example',
          firstName: 'Kwame',
          lastName: 'Berg',
        }),
      ),
    );
    expect(other?.entityId).not.toBe(inB?.entityId);
    expect(other?.decision).toBe('created');
  });

  it('a notification of an unknown record without a key links nothing; its full record then joins the twin', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService();
    const inB = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, 'b-1', { email: 'di.dunn@globex.example' }),
      ),
    );
    const partial = { ...person(ws.workspaceId, ws.hubspotA, 'a-1', { jobTitle: 'Lead' }), partial: true };
    expect(await inTx((tx) => identity.resolveChange(tx, partial))).toBeUndefined();
    expect((await snapshot(ws.workspaceId)).links).toHaveLength(1);
    // The full record, email and all, joins its twin in B.
    const full = person(ws.workspaceId, ws.hubspotA, 'a-1', {
      email: 'Di.Dunn@globex.example',
      jobTitle: 'Lead',
    });
    expect((await inTx((tx) => identity.resolveChange(tx, full)))?.entityId).toBe(inB?.entityId);
    // A notification that carries a key is placed by it.
    const keyed = {
      ...person(ws.workspaceId, ws.gmail, 'g-1', { email: 'di.dunn@globex.example' }),
      partial: true,
    };
    expect((await inTx((tx) => identity.resolveChange(tx, keyed)))?.entityId).toBe(inB?.entityId);
  });

  it('a notification whose keys name nobody makes no entity: a phone alone is no person', async () => {
    const ws = await seedWorkspace();
    const identity = new IdentityService();
    // Our own create in A, reported one property each before its receipt links it: the phone
    // arrives first and names nobody (a phone links only with a name).
    const notified = (fields: Record<string, unknown>) => ({
      ...person(ws.workspaceId, ws.hubspotA, 'a-7', fields),
      partial: true,
    });
    const inB = await inTx((tx) =>
      identity.resolveChange(
        tx,
        person(ws.workspaceId, ws.hubspotB, 'b-7', {
          email: 'zoe@gringotts.example',
          firstName: 'Zoë',
          lastName: 'Fraser',
          phone: '+61 2 5550 8842',
        }),
      ),
    );
    expect(
      await inTx((tx) => identity.resolveChange(tx, notified({ phone: '+61 2 5550 8842' }))),
    ).toBeUndefined();
    expect(
      await inTx((tx) => identity.resolveChange(tx, notified({ email: 'nobody.yet@elsewhere.example' }))),
    ).toBeUndefined();
    const after = await snapshot(ws.workspaceId);
    expect(after.entities).toHaveLength(1);
    expect(after.links).toHaveLength(1);
    // Its address, when a notification carries it, places it with its twin.
    const byEmail = await inTx((tx) =>
      identity.resolveChange(tx, notified({ email: 'zoe@gringotts.example' })),
    );
    expect(byEmail?.entityId).toBe(inB?.entityId);
    expect((await snapshot(ws.workspaceId)).entities).toHaveLength(1);
  });
});
