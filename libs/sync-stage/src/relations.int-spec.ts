import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { contactEvent, type StageEvent, seedConnections, syncStage } from './testing/sync-stage';

/**
 * Entity-to-entity associations (entity_relation) as the real sync stage writes them, against
 * real Postgres: a CRM record's associated records resolved to their entities (also when they
 * arrive later), two CRMs' associations of one pair read as one with both sources, the
 * company derived from an address's domain, and the same rows after a replay.
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('sync_relations');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const T0 = new Date('2026-11-20T09:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

/** A HubSpot company or deal as its pull reports it at `time` (a contact's event, retyped). */
const crmEvent =
  (entityType: 'company' | 'deal', objects: string) =>
  (
    workspaceId: string,
    connectionId: string,
    externalId: string,
    time: Date,
    fields: Record<string, unknown>,
  ): StageEvent => ({
    ...contactEvent(workspaceId, connectionId, externalId, time, fields),
    entityType,
    eventKey: `${objects}:${externalId}:${time.getTime()}`,
  });
const companyEvent = crmEvent('company', 'companies');
const dealEvent = crmEvent('deal', 'deals');

const mailEvent = (
  workspaceId: string,
  connectionId: string,
  externalId: string,
  from: string,
): StageEvent => ({
  workspaceId,
  connectionId,
  entityType: 'email_activity',
  externalId,
  op: 'upsert',
  eventKey: `messages:${externalId}`,
  fields: {
    messageId: `<${externalId}@x.example>`,
    subject: 'Hi',
    from,
    to: ['me@syncline.example'],
    sentAt: '2026-11-20T08:00:00.000Z',
  },
  fieldTimes: {},
  eventTime: at(1),
  origin: null,
});

const entityOf = async (connectionId: string, externalId: string): Promise<string> => {
  const { rows } = await pool.query<{ entity_id: string }>(
    'SELECT entity_id FROM source_link WHERE connection_id = $1 AND external_id = $2',
    [connectionId, externalId],
  );
  const id = rows[0]?.entity_id;
  if (id === undefined) throw new Error(`${externalId} is not linked`);
  return id;
};

const personByEmail = async (workspaceId: string, email: string): Promise<string> => {
  const { rows } = await pool.query<{ entity_id: string }>(
    `SELECT entity_id FROM match_key WHERE workspace_id = $1 AND entity_type = 'person' AND kind = 'email' AND value = $2`,
    [workspaceId, email],
  );
  if (!rows[0]) throw new Error(`no person ${email}`);
  return rows[0].entity_id;
};

/** The associations of the workspace as the API reads them: one per pair, with every source. */
const pairs = async (workspaceId: string) =>
  (
    await pool.query<{ from_id: string; to_id: string; to_type: string; sources: string[] }>(
      `SELECT r.from_id, r.to_id, r.to_type,
              array_agg(COALESCE(r.connection_id::text, 'derived') ORDER BY COALESCE(r.connection_id::text, 'derived')) AS sources
         FROM entity_relation r WHERE r.workspace_id = $1 AND r.to_id IS NOT NULL
        GROUP BY r.from_id, r.to_id, r.to_type ORDER BY r.to_type, r.from_id, r.to_id`,
      [workspaceId],
    )
  ).rows;

const rows = async (workspaceId: string) =>
  (
    await pool.query<{
      kind: string;
      from_id: string;
      to_id: string | null;
      to_type: string;
      to_external_id: string | null;
      evidence: unknown;
    }>(
      `SELECT kind, from_id, to_id, to_type, to_external_id, evidence FROM entity_relation
        WHERE workspace_id = $1 ORDER BY key`,
      [workspaceId],
    )
  ).rows;

/** Every column, created_at included: a replay must not even touch a row. */
const rawRows = async (workspaceId: string): Promise<string[]> =>
  (
    await pool.query<{ row: string }>(
      'SELECT to_jsonb(r)::text AS row FROM entity_relation r WHERE workspace_id = $1 ORDER BY 1',
      [workspaceId],
    )
  ).rows.map((r) => r.row);

describe('entity relations in the sync stage', () => {
  it("resolves a contact's company when the company arrives after it, never merging the ids as a field", async () => {
    const { workspaceId, crm } = await seedConnections(pool, { crm: 'hubspot' });
    const stage = syncStage(pool);
    const contact = contactEvent(workspaceId, crm, 'c-1', at(0), {
      email: 'ada@acme.example',
      firstName: 'Ada',
      associations: { company: ['co-1'] },
    });
    await stage.handle(contact);
    const ada = await entityOf(crm, 'c-1');
    expect(await rows(workspaceId)).toEqual([
      { kind: 'crm', from_id: ada, to_id: null, to_type: 'company', to_external_id: 'co-1', evidence: null },
    ]);
    const { rows: view } = await pool.query<{ fields: Record<string, unknown> }>(
      'SELECT fields FROM entity WHERE id = $1',
      [ada],
    );
    expect(view[0]?.fields).toEqual({ email: 'ada@acme.example', firstName: 'Ada' });

    const company = companyEvent(workspaceId, crm, 'co-1', at(1), { name: 'Acme', domain: 'acme.example' });
    await stage.handle(company);
    const acme = await entityOf(crm, 'co-1');
    // The CRM says it: no derived row beside it, though the domain would give the same.
    expect(await rows(workspaceId)).toEqual([
      { kind: 'crm', from_id: ada, to_id: acme, to_type: 'company', to_external_id: 'co-1', evidence: null },
    ]);

    // A deal carries its contacts and companies; a change without the key says nothing.
    const deal = dealEvent(workspaceId, crm, 'd-1', at(2), {
      name: 'Big',
      associations: { person: ['c-1'], company: ['co-1', 'co-2'] },
    });
    await stage.handle(deal);
    await stage.handle({
      ...dealEvent(workspaceId, crm, 'd-1', at(3), { name: 'Bigger' }),
      origin: { partial: true },
    });
    const big = await entityOf(crm, 'd-1');
    expect(
      (await rows(workspaceId))
        .filter((r) => r.from_id === big)
        .map((r) => [r.to_type, r.to_external_id, r.to_id]),
    ).toEqual([
      ['company', 'co-1', acme],
      ['company', 'co-2', null],
      ['person', 'c-1', ada],
    ]);
    // The contact drops its company: the row goes (and the domain derives it now).
    const dropped = contactEvent(workspaceId, crm, 'c-1', at(4), {
      email: 'ada@acme.example',
      firstName: 'Ada',
      associations: { company: [] },
    });
    await stage.handle(dropped);
    expect((await rows(workspaceId)).filter((r) => r.from_id === ada)).toEqual([
      {
        kind: 'derived',
        from_id: ada,
        to_id: acme,
        to_type: 'company',
        to_external_id: null,
        evidence: { domain: 'acme.example', email: 'ada@acme.example' },
      },
    ]);

    // A replay of every event, in a new process, leaves every row untouched; a rebuild from
    // nothing writes the same rows.
    const all = [contact, company, deal, dropped];
    const settled = await rawRows(workspaceId);
    await syncStage(pool).handle(...all);
    expect(await rawRows(workspaceId)).toEqual(settled);
    const before = await rows(workspaceId);
    await pool.query('DELETE FROM entity_relation WHERE workspace_id = $1', [workspaceId]);
    await syncStage(pool).handle(...all);
    expect(await rows(workspaceId)).toEqual(before);
  });

  it("reads two CRMs' associations of the same pair as one association with both sources", async () => {
    const { workspaceId, a, b } = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
    const stage = syncStage(pool);
    await stage.handle(
      companyEvent(workspaceId, a, 'a-co', at(0), { name: 'Initech', domain: 'initech.example' }),
      contactEvent(workspaceId, a, 'a-c', at(0), {
        email: 'peter@initech.example',
        firstName: 'Peter',
        associations: { company: ['a-co'] },
      }),
    );
    // B knows the same person and company under its own ids; its contact arrives before its company.
    await stage.handle(
      contactEvent(workspaceId, b, 'b-c', at(1), {
        email: 'Peter@Initech.example',
        firstName: 'Peter',
        associations: { company: ['b-co'] },
      }),
    );
    await stage.handle(
      companyEvent(workspaceId, b, 'b-co', at(2), { name: 'Initech Inc', domain: 'initech.example' }),
    );
    const peter = await entityOf(a, 'a-c');
    const initech = await entityOf(a, 'a-co');
    expect(await entityOf(b, 'b-c')).toBe(peter);
    expect(await entityOf(b, 'b-co')).toBe(initech);
    expect(await pairs(workspaceId)).toEqual([
      { from_id: peter, to_id: initech, to_type: 'company', sources: [a, b].sort() },
    ]);
    // B no longer says it: A's stays.
    await stage.handle(
      contactEvent(workspaceId, b, 'b-c', at(3), {
        email: 'peter@initech.example',
        firstName: 'Peter',
        associations: { company: [] },
      }),
    );
    expect(await pairs(workspaceId)).toEqual([
      { from_id: peter, to_id: initech, to_type: 'company', sources: [a] },
    ]);
    // The company deleted in A: A's row waits unresolved (B still links the company).
    await stage.handle({ ...companyEvent(workspaceId, a, 'a-co', at(4), {}), op: 'delete' });
    expect(await pairs(workspaceId)).toEqual([]);
    expect((await rows(workspaceId)).map((r) => [r.kind, r.to_external_id, r.to_id])).toEqual([
      ['crm', 'a-co', null],
    ]);
  });

  it('derives a company from the domain of a Gmail-only person, either way round, with its evidence', async () => {
    const { workspaceId, crm, gmail } = await seedConnections(pool, { crm: 'hubspot', gmail: 'gmail' });
    const stage = syncStage(pool);
    // Dee is known from a mail only, before the company exists.
    await stage.handle(mailEvent(workspaceId, gmail, 'm-1', 'dee@globex.example'));
    await stage.handle(mailEvent(workspaceId, gmail, 'm-2', 'fay@gmail.com'));
    const dee = await personByEmail(workspaceId, 'dee@globex.example');
    const fay = await personByEmail(workspaceId, 'fay@gmail.com');
    expect(await rows(workspaceId)).toEqual([]);
    await stage.handle(
      companyEvent(workspaceId, crm, 'co-g', at(2), { name: 'Globex', domain: 'www.globex.example' }),
    );
    const globex = await entityOf(crm, 'co-g');
    // Eve comes after the company.
    await stage.handle(mailEvent(workspaceId, gmail, 'm-3', 'eve@globex.example'));
    const eve = await personByEmail(workspaceId, 'eve@globex.example');
    const derived = (await rows(workspaceId)).map((r) => [r.kind, r.from_id, r.to_id, r.evidence]);
    expect(derived).toEqual(
      expect.arrayContaining([
        ['derived', dee, globex, { domain: 'globex.example', email: 'dee@globex.example' }],
        ['derived', eve, globex, { domain: 'globex.example', email: 'eve@globex.example' }],
      ]),
    );
    expect(derived).toHaveLength(2);
    expect(derived.some((r) => r[1] === fay)).toBe(false);

    // A CRM gives Dee another company: the derived one gives way.
    await stage.handle(
      contactEvent(workspaceId, crm, 'c-dee', at(5), {
        email: 'dee@globex.example',
        associations: { company: ['co-other'] },
      }),
    );
    expect(await entityOf(crm, 'c-dee')).toBe(dee);
    expect(
      (await rows(workspaceId)).filter((r) => r.from_id === dee).map((r) => [r.kind, r.to_external_id]),
    ).toEqual([['crm', 'co-other']]);
    // The company's domain moves away: Eve's derived company goes with it.
    await stage.handle(
      companyEvent(workspaceId, crm, 'co-g', at(6), { name: 'Globex', domain: 'globex.example.org' }),
    );
    expect((await rows(workspaceId)).filter((r) => r.kind === 'derived')).toEqual([]);
  });
});

describe('associations written back to the other CRMs (sync stage)', () => {
  interface Owed {
    connection_id: string;
    op: string;
    entity_id: string;
    fields: Record<string, unknown>;
    status: string;
    idempotency_key: string;
  }
  const owedOf = async (workspaceId: string): Promise<Owed[]> =>
    (
      await pool.query<Owed>(
        `SELECT connection_id, op, entity_id, fields, status, idempotency_key FROM outbox
          WHERE workspace_id = $1 AND op IN ('associate', 'dissociate') ORDER BY id`,
        [workspaceId],
      )
    ).rows;
  const mirrorsOf = async (workspaceId: string) =>
    (
      await pool.query<{ connection_id: string; from_id: string; to_id: string }>(
        `SELECT connection_id, from_id, to_id FROM relation_mirror
          WHERE workspace_id = $1 AND associate_key IS NOT NULL ORDER BY key`,
        [workspaceId],
      )
    ).rows;
  /** What the push stage would do: every pending association row is sent. */
  const send = (workspaceId: string) =>
    pool.query(
      `UPDATE outbox SET status = 'sent' WHERE workspace_id = $1 AND op IN ('associate', 'dissociate') AND status = 'pending'`,
      [workspaceId],
    );

  it('owes a pair associated in A to B once, nothing to A; the echo and a replay owe nothing more; a removal in A removes ours', async () => {
    const { workspaceId, a, b } = await seedConnections(
      pool,
      { a: 'hubspot', b: 'hubspot' },
      { reconciled: true },
    );
    const stage = syncStage(pool);
    const aCompany = companyEvent(workspaceId, a, 'a-co', at(0), {
      name: 'Umbrella',
      domain: 'umbrella.example',
    });
    const bCompany = companyEvent(workspaceId, b, 'b-co', at(0), {
      name: 'Umbrella',
      domain: 'umbrella.example',
    });
    const aContact = contactEvent(workspaceId, a, 'a-c', at(0), {
      email: 'al@umbrella.example',
      firstName: 'Al',
    });
    const bContact = contactEvent(workspaceId, b, 'b-c', at(0), {
      email: 'al@umbrella.example',
      firstName: 'Al',
      associations: { company: [] },
    });
    await stage.handle(aCompany, bCompany, aContact, bContact);
    expect(await owedOf(workspaceId)).toEqual([]);
    const al = await entityOf(a, 'a-c');
    const umbrella = await entityOf(a, 'a-co');

    // A salesperson associates Al with Umbrella in A.
    const associated = contactEvent(workspaceId, a, 'a-c', at(1), {
      email: 'al@umbrella.example',
      firstName: 'Al',
      associations: { company: ['a-co'] },
    });
    await stage.handle(associated);
    const first = await owedOf(workspaceId);
    expect(first.map((r) => [r.connection_id, r.op, r.entity_id, r.fields, r.status])).toEqual([
      [b, 'associate', al, { toType: 'company', toId: umbrella }, 'pending'],
    ]);
    expect(await mirrorsOf(workspaceId)).toEqual([{ connection_id: b, from_id: al, to_id: umbrella }]);
    // The same change again (a webhook and a pull of one version) owes nothing new.
    await stage.handle(associated);
    expect(await owedOf(workspaceId)).toEqual(first);

    // Sent; B reads it back: its own report of our write owes nothing anywhere.
    await send(workspaceId);
    const echo = contactEvent(workspaceId, b, 'b-c', at(2), {
      email: 'al@umbrella.example',
      firstName: 'Al',
      associations: { company: ['b-co'] },
    });
    await stage.handle(echo);
    expect((await owedOf(workspaceId)).map((r) => [r.op, r.status])).toEqual([['associate', 'sent']]);

    // A replay of every event in a new process meets the write already sent: nothing new.
    await syncStage(pool).handle(aCompany, bCompany, aContact, bContact, associated, echo);
    expect((await owedOf(workspaceId)).map((r) => [r.op, r.status])).toEqual([['associate', 'sent']]);

    // Removed in A, its only source: B's copy was ours, so B is owed the removal of that pair.
    const removed = contactEvent(workspaceId, a, 'a-c', at(3), {
      email: 'al@umbrella.example',
      firstName: 'Al',
      associations: { company: [] },
    });
    await stage.handle(removed);
    const after = await owedOf(workspaceId);
    expect(after.slice(1).map((r) => [r.connection_id, r.op, r.fields.pairs, r.status])).toEqual([
      [b, 'dissociate', [['b-c', 'b-co']], 'pending'],
    ]);
    expect(await mirrorsOf(workspaceId)).toEqual([]);
    await send(workspaceId);
    // B reports it gone: nothing more (and A is not owed anything back).
    await stage.handle(
      contactEvent(workspaceId, b, 'b-c', at(4), {
        email: 'al@umbrella.example',
        firstName: 'Al',
        associations: { company: [] },
      }),
    );
    expect((await owedOf(workspaceId)).map((r) => [r.connection_id, r.op, r.status])).toEqual([
      [b, 'associate', 'sent'],
      [b, 'dissociate', 'sent'],
    ]);

    // The echo of our own removal is no removal of B's: nothing is noted against the pair there
    // (A's removal of its own is).
    const notes = await pool.query<{ connection_id: string; declined: boolean }>(
      'SELECT connection_id, declined_at IS NOT NULL AS declined FROM relation_mirror WHERE workspace_id = $1',
      [workspaceId],
    );
    expect(notes.rows).toEqual([{ connection_id: a, declined: true }]);
    // Associated again in A: a new assertion, owed under a new key.
    await stage.handle(
      contactEvent(workspaceId, a, 'a-c', at(5), {
        email: 'al@umbrella.example',
        firstName: 'Al',
        associations: { company: ['a-co'] },
      }),
    );
    const again = await owedOf(workspaceId);
    expect(again.map((r) => [r.connection_id, r.op, r.status])).toEqual([
      [b, 'associate', 'sent'],
      [b, 'dissociate', 'sent'],
      [b, 'associate', 'pending'],
    ]);
    expect(new Set(again.map((r) => r.idempotency_key)).size).toBe(3);
  });

  it("never removes B's own association, and does not write back one a person removed from our copy", async () => {
    const { workspaceId, a, b } = await seedConnections(
      pool,
      { a: 'hubspot', b: 'hubspot' },
      { reconciled: true },
    );
    const stage = syncStage(pool);
    const contact = (conn: string, ext: string, time: Date, companies: string[]) =>
      contactEvent(workspaceId, conn, ext, time, {
        email: 'bo@hooli.example',
        firstName: 'Bo',
        associations: { company: companies },
      });
    // Both CRMs associate Bo with Hooli on their own.
    await stage.handle(
      companyEvent(workspaceId, a, 'a-co', at(0), { name: 'Hooli', domain: 'hooli.example' }),
      companyEvent(workspaceId, b, 'b-co', at(0), { name: 'Hooli', domain: 'hooli.example' }),
      contact(a, 'a-c', at(0), ['a-co']),
      contact(b, 'b-c', at(0), ['b-co']),
    );
    expect(await owedOf(workspaceId)).toEqual([]);
    // A removes it: B's association is B's own, and stays.
    await stage.handle(contact(a, 'a-c', at(1), []));
    expect(await owedOf(workspaceId)).toEqual([]);
    expect(await mirrorsOf(workspaceId)).toEqual([]);

    // A associates Bo with another company B also has: written to B. Someone in B removes our
    // copy: A still has it, but it is not written to B again; and when A removes it too, B (which
    // no longer reports it) is owed nothing.
    await stage.handle(
      companyEvent(workspaceId, a, 'a-co2', at(2), { name: 'Hooli XYZ', domain: 'hooli-xyz.example' }),
      companyEvent(workspaceId, b, 'b-co2', at(2), { name: 'Hooli XYZ', domain: 'hooli-xyz.example' }),
    );
    await stage.handle(contact(a, 'a-c', at(3), ['a-co2']));
    expect((await owedOf(workspaceId)).map((r) => [r.connection_id, r.op, r.status])).toEqual([
      [b, 'associate', 'pending'],
    ]);
    await send(workspaceId);
    await stage.handle(contact(b, 'b-c', at(4), ['b-co', 'b-co2']));
    await stage.handle(contact(b, 'b-c', at(5), ['b-co']));
    await stage.handle(contact(a, 'a-c', at(6), ['a-co2']));
    expect((await owedOf(workspaceId)).map((r) => [r.op, r.status])).toEqual([['associate', 'sent']]);
    expect(await mirrorsOf(workspaceId)).toHaveLength(1);
    await stage.handle(contact(a, 'a-c', at(7), []));
    expect((await owedOf(workspaceId)).map((r) => [r.op, r.status])).toEqual([['associate', 'sent']]);
    expect(await mirrorsOf(workspaceId)).toEqual([]);
  });

  it('owes the association to a connection where one end is still being created, and sets it aside when the pair goes first', async () => {
    const { workspaceId, a, b } = await seedConnections(
      pool,
      { a: 'hubspot', b: 'hubspot' },
      { reconciled: true },
    );
    const stage = syncStage(pool);
    // Only A knows Cy and Pied Piper: B is owed both records and their association.
    await stage.handle(
      companyEvent(workspaceId, a, 'a-co', at(0), { name: 'Pied Piper', domain: 'piedpiper.example' }),
      contactEvent(workspaceId, a, 'a-c', at(0), {
        email: 'cy@piedpiper.example',
        firstName: 'Cy',
        associations: { company: ['a-co'] },
      }),
    );
    const cy = await entityOf(a, 'a-c');
    const piper = await entityOf(a, 'a-co');
    const { rows } = await pool.query<{ op: string; entity_id: string; fields: Record<string, unknown> }>(
      `SELECT op, entity_id, fields FROM outbox WHERE connection_id = $1 ORDER BY id`,
      [b],
    );
    expect(rows.map((r) => [r.op, r.entity_id])).toEqual(
      expect.arrayContaining([
        ['create', cy],
        ['create', piper],
        ['associate', cy],
      ]),
    );
    // Creates go first (lower ids): the push links them before it resolves the association.
    expect(rows.at(-1)).toMatchObject({ op: 'associate', fields: { toType: 'company', toId: piper } });
    // The association is removed in A before the push ran: the write is set aside, never sent.
    await stage.handle(
      contactEvent(workspaceId, a, 'a-c', at(1), {
        email: 'cy@piedpiper.example',
        firstName: 'Cy',
        associations: { company: [] },
      }),
    );
    // B holds neither record yet, so nothing says the pair is removed there: A does (it holds both).
    expect((await owedOf(workspaceId)).map((r) => [r.op, r.status])).toEqual([['associate', 'superseded']]);
    expect(await mirrorsOf(workspaceId)).toEqual([]);
  });
});
