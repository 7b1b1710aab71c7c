import { inTransaction, type Queryable } from '@syncline/core';
import fc from 'fast-check';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { type IdentityChange, IdentityService } from './identity.service';
import { seedWorkspace } from './testing/seed-workspace';

/**
 * Identity decisions do not depend on arrival order: any permutation of the same records, in
 * any split into batches, gives the same partition into entities, and no entity ever holds two
 * people. The population is adversarial: near-namesakes at one company (Maria and Mario Garcia,
 * "Person 01" … "Person 12"), a family sharing one phone, people with a second address that
 * only another CRM knows (a record naming two entities joins them), a phone written without its
 * country code, swapped name order, address case.
 */

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('identity_order');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const inTx = <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => inTransaction(pool, fn);

interface Truth {
  /** The person the record is of. */
  person: string;
  connection: 'a' | 'b' | 'gmail';
  externalId: string;
  fields: Record<string, unknown>;
}

/** The world: every record with the person it truly is. */
function world(): Truth[] {
  const out: Truth[] = [];
  const add = (person: string, connection: Truth['connection'], externalId: string, fields: object) =>
    out.push({ person, connection, externalId, fields: { ...fields } });
  const acme = { company: 'Acme Widgets' };
  // Two people one letter apart, same company and domain, one family phone; both in both CRMs.
  add('maria', 'a', 'a-maria', {
    ...acme,
    email: 'maria.garcia@acmewidgets.example',
    firstName: 'Maria',
    lastName: 'Garcia',
    phone: '+1 415 555 0100',
  });
  add('mario', 'a', 'a-mario', {
    ...acme,
    email: 'mario.garcia@acmewidgets.example',
    firstName: 'Mario',
    lastName: 'Garcia',
    phone: '+1 415 555 0100',
  });
  add('maria', 'b', 'b-maria', {
    email: 'Maria.Garcia@AcmeWidgets.example',
    name: 'Garcia Maria',
    phone: '(415) 555-0100',
  });
  add('mario', 'b', 'b-mario', { email: 'mario.garcia@acmewidgets.example', name: 'Mario Garcia' });
  // The family line: Mario's daughter, no address in common.
  add('lucia', 'b', 'b-lucia', { name: 'Lucia Garcia', phone: '+1 (415) 555-0100' });
  // One of them only in A, the other only in B: still two.
  add('jon', 'a', 'a-jon', { ...acme, email: 'jon.smith@acmewidgets.example', name: 'Jon Smith' });
  add('joan', 'b', 'b-joan', { ...acme, email: 'joan.smith@acmewidgets.example', name: 'Joan Smith' });
  // "Person NN" at one company, with their own addresses, in both CRMs.
  for (let i = 1; i <= 12; i++) {
    const nn = String(i).padStart(2, '0');
    const email = `person${nn}@acmewidgets.example`;
    add(`p${nn}`, 'a', `a-p${nn}`, { ...acme, email, firstName: 'Person', lastName: nn });
    if (i % 3 !== 0) add(`p${nn}`, 'b', `b-p${nn}`, { email: email.toUpperCase(), name: `Person ${nn}` });
  }
  // Ana: a work address in A, a personal one in the mailbox, both in B: one person.
  add('ana', 'a', 'a-ana', { email: 'ana.lima@acmewidgets.example', firstName: 'Ana', lastName: 'Lima' });
  add('ana', 'gmail', 'mailto:ana.lima77@fastmail.example', { email: 'ana.lima77@fastmail.example' });
  add('ana', 'b', 'b-ana', {
    emails: ['ana.lima77@fastmail.example', 'ana.lima@acmewidgets.example'],
    name: 'Ana Lima',
  });
  // Emily: the same phone and name, one side without its country code, different addresses.
  add('emily', 'a', 'a-emily', {
    email: 'emily.carter@acmewidgets.example',
    name: 'Emily Carter',
    phone: '+1 415 555 0132',
  });
  add('emily', 'b', 'b-emily', {
    email: 'emily.carter42@fastmail.example',
    name: 'Carter Emily',
    phone: '(415) 555-0132',
  });
  // A job change: new company address, same personal address in the mailbox and in B.
  add('omar', 'a', 'a-omar', { email: 'omar.haddad@oldco.example', name: 'Omar Haddad' });
  add('omar', 'b', 'b-omar', {
    emails: ['omar.haddad@newco.example', 'omar.h@fastmail.example', 'omar.haddad@oldco.example'],
    name: 'Omar Haddad',
  });
  add('omar', 'gmail', 'mailto:omar.h@fastmail.example', { email: 'omar.h@fastmail.example' });
  return out;
}

/**
 * Runs the records in the given order, cut into batches at the given points (each batch one
 * transaction, as a consumer commits them), through a fresh identity service each batch when
 * asked (a restart), and returns the partition: for each record, the sorted list of the records
 * its entity holds, keyed `connection:externalId`.
 */
async function partitionOf(
  records: readonly Truth[],
  cuts: ReadonlySet<number>,
  restartEachBatch: boolean,
): Promise<Map<string, string>> {
  const ws = await seedWorkspace(pool, { a: 'hubspot', b: 'hubspot', gmail: 'gmail' });
  const change = (r: Truth): IdentityChange => ({
    workspaceId: ws.workspaceId,
    connectionId: ws.connections[r.connection],
    entityType: 'person',
    externalId: r.externalId,
    op: 'upsert',
    fields: r.fields,
  });
  let identity = new IdentityService({ settings: () => ({ defaultCountry: 'US' }) });
  let batch: IdentityChange[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    await inTx((tx) => identity.handle(tx, events));
    if (restartEachBatch) identity = new IdentityService({ settings: () => ({ defaultCountry: 'US' }) });
  };
  for (const [i, r] of records.entries()) {
    if (cuts.has(i)) await flush();
    batch.push(change(r));
  }
  await flush();
  const { rows } = await pool.query<{ connection_id: string; external_id: string; entity: string }>(
    `SELECT l.connection_id, l.external_id, COALESCE(e.merged_into, e.id)::text AS entity
       FROM source_link l JOIN entity e ON e.id = l.entity_id
      WHERE l.workspace_id = $1 AND l.entity_type = 'person'`,
    [ws.workspaceId],
  );
  const names = new Map<string, string>(Object.entries(ws.connections).map(([name, id]) => [id, name]));
  const byEntity = new Map<string, string[]>();
  const entityOf = new Map<string, string>();
  for (const row of rows) {
    const key = `${names.get(row.connection_id)}:${row.external_id}`;
    entityOf.set(key, row.entity);
    byEntity.set(row.entity, [...(byEntity.get(row.entity) ?? []), key]);
  }
  return new Map([...entityOf].map(([key, entity]) => [key, byEntity.get(entity)!.sort().join(' ')]));
}

const recordKey = (r: Truth) => `${r.connection}:${r.externalId}`;

describe('identity over arrival orders (property)', () => {
  const records = world();
  const truth = new Map(records.map((r) => [recordKey(r), r.person]));

  it('every order and split gives one partition, and it never holds two people in one entity', async () => {
    const reference = await partitionOf(records, new Set(), false);
    // The partition is exactly the people, here: each person one entity, no two people together.
    for (const [key, members] of reference) {
      const people = new Set(members.split(' ').map((m) => truth.get(m)));
      expect(people, `${key} is with ${members}`).toEqual(new Set([truth.get(key)]));
    }
    const byPerson = new Map<string, Set<string>>();
    for (const [key, members] of reference) {
      const set = byPerson.get(truth.get(key)!) ?? new Set();
      set.add(members);
      byPerson.set(truth.get(key)!, set);
    }
    for (const [person, entities] of byPerson) expect(entities.size, person).toBe(1);

    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(records, { minLength: records.length, maxLength: records.length }),
        fc.uniqueArray(fc.integer({ min: 1, max: records.length - 1 }), { maxLength: 6 }),
        fc.boolean(),
        async (order, cuts, restart) => {
          const partition = await partitionOf(order, new Set(cuts), restart);
          expect(partition).toEqual(reference);
        },
      ),
      { numRuns: 25, seed: 20261203 },
    );
  }, 120_000);
});
