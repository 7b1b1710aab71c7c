import { inTransaction } from '@syncline/core';
import type { LogEvent } from '@syncline/log';
import fc from 'fast-check';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { refusedCreateChange } from './existing-record';
import { contactEvent, logEventOf, seedConnections, syncStage } from './testing/sync-stage';
import {
  CLAIM_LIFETIME_MS,
  foldWriteEvents,
  recordVersionChange,
  writeClaimChange,
  writeReceiptChange,
} from './write-events';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('write_events');
  pool = new Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** One of our writes' events, as a history step: its record, its write's key, what it carries. */
type Step =
  | { kind: 'version'; record: 'b-1' | 'b-2'; version: string; later: boolean }
  | {
      kind: 'existing';
      record: 'b-1' | 'b-2';
      key: string;
      /** Whose create was refused. */
      who: 'ada' | 'grace';
      /** Whether the record holds the create's address (a key agrees). */
      agrees: boolean;
      later: boolean;
    }
  | { kind: 'claim'; record: 'b-1' | 'b-2'; key: string; attempt: number; later: boolean }
  | {
      kind: 'receipt';
      record: 'b-1' | 'b-2';
      key: string;
      op: 'create' | 'update';
      version: string | null;
      later: boolean;
    };

const VERSIONS = [
  '2026-12-04T10:00:00.000Z',
  '2026-12-04T10:00:01.000Z',
  '2026-12-04T09:00:00Z',
  '"etag-1"',
  '"etag-2"',
];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('version' as const),
    record: fc.constantFrom('b-1' as const, 'b-2' as const),
    version: fc.constantFrom(...VERSIONS),
    later: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('existing' as const),
    record: fc.constantFrom('b-1' as const, 'b-2' as const),
    key: fc.constantFrom('k1', 'k4'),
    who: fc.constantFrom('ada' as const, 'grace' as const),
    agrees: fc.boolean(),
    later: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('claim' as const),
    record: fc.constantFrom('b-1' as const, 'b-2' as const),
    key: fc.constantFrom('k1', 'k2', 'k3'),
    attempt: fc.integer({ min: 0, max: 2 }),
    later: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('receipt' as const),
    record: fc.constantFrom('b-1' as const, 'b-2' as const),
    key: fc.constantFrom('k1', 'k2', 'k3'),
    op: fc.constantFrom('create' as const, 'update' as const),
    version: fc.constantFrom(null, ...VERSIONS),
    later: fc.boolean(),
  }),
);

/**
 * Ada in A and B (b-1 linked), Grace in A only, in a workspace of its own; b-2 is a record a
 * create makes, or one a refused create finds.
 */
async function seeded() {
  const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' });
  const { handle } = syncStage(pool);
  const at = new Date(Date.now() - 3_600_000);
  const ada = { email: 'ada@analytical.example', firstName: 'Ada' };
  await handle(contactEvent(ws.workspaceId, ws.a, 'a-1', at, ada));
  await handle(contactEvent(ws.workspaceId, ws.b, 'b-1', at, ada));
  await handle(contactEvent(ws.workspaceId, ws.a, 'a-2', at, { email: 'grace@navy.example' }));
  const linkOf = async (connectionId: string, externalId: string) =>
    (
      await pool.query<{ entity_id: string }>(
        'SELECT entity_id::text FROM source_link WHERE connection_id = $1 AND external_id = $2',
        [connectionId, externalId],
      )
    ).rows[0]!.entity_id;
  return { ...ws, entityId: await linkOf(ws.b, 'b-1'), graceId: await linkOf(ws.a, 'a-2') };
}

const EMAIL = { ada: 'ada@analytical.example', grace: 'grace@navy.example' };

/** The steps as log events of `ws`: each a second after the last, or past a claim's lifetime. */
function eventsOf(ws: Awaited<ReturnType<typeof seeded>>, steps: readonly Step[]): LogEvent[] {
  let clock = Date.UTC(2026, 11, 4, 10);
  const receipted = new Set<string>();
  const claimed = new Set<string>();
  const versioned = new Set<string>();
  return steps.flatMap((step, i) => {
    clock += step.later ? CLAIM_LIFETIME_MS + 1_000 : 1_000;
    const target = {
      workspaceId: ws.workspaceId,
      connectionId: ws.b,
      entityType: 'person' as const,
      externalId: step.record,
    };
    if (step.kind === 'version') {
      // Named by a refusal: the report of that version (one per version) is on the log already.
      const change = recordVersionChange(
        { ...target, eventTime: new Date(clock) },
        `contacts:${step.record}:${step.version}`,
        step.version,
      );
      if (versioned.has(change.eventKey)) return [];
      versioned.add(change.eventKey);
      return [logEventOf(change, { offset: i + 1, ingestedAt: new Date(clock) })];
    }
    if (step.kind === 'existing') {
      const refused = refusedCreateChange(target, {
        idempotencyKey: step.key,
        entityId: step.who === 'ada' ? ws.entityId : ws.graceId,
        fields: { email: EMAIL[step.who] },
        refusal: 'Conflict: Contact already exists',
        record: { fields: { email: step.agrees ? EMAIL[step.who] : 'someone@else.example' } },
        refusedAt: new Date(clock).toISOString(),
      });
      return [logEventOf(refused, { offset: i + 1, ingestedAt: new Date(clock) })];
    }
    const write = {
      idempotencyKey: step.key,
      entityId: ws.entityId,
      fields: { n: i },
      prior: {},
      heads: [`h${i}`],
    };
    // The log holds one event per key: a repeat is a redelivery, dropped there.
    const key = step.kind === 'claim' ? `${step.key}:${step.attempt}` : step.key;
    const seen = step.kind === 'claim' ? claimed : receipted;
    if (seen.has(key)) return [];
    seen.add(key);
    const change =
      step.kind === 'claim'
        ? writeClaimChange(target, {
            ...write,
            attempt: step.attempt,
            claimedAt: new Date(clock).toISOString(),
          })
        : writeReceiptChange(
            target,
            { ...write, op: step.op, contentHash: `c${i}`, sentAt: new Date(clock).toISOString() },
            step.version,
          );
    return [logEventOf(change, { offset: i + 1, ingestedAt: new Date(clock) })];
  });
}

/** The steps folded as the sync stage folds our writes' events: one batch, in one transaction. */
const foldSteps = (ws: Awaited<ReturnType<typeof seeded>>, steps: readonly Step[]) =>
  inTransaction(pool, (tx) => foldWriteEvents(tx, eventsOf(ws, steps)));

/** What the fold left of connection B, the entities named as Ada and Grace (ids differ between workspaces). */
async function stateOf(ws: Awaited<ReturnType<typeof seeded>>) {
  const connectionId = ws.b;
  const named = (id: string) => (id === ws.entityId ? 'ada' : id === ws.graceId ? 'grace' : id);
  const claims = await pool.query(
    `SELECT idempotency_key, attempt, external_id, fields, ingested_at FROM write_claim
      WHERE connection_id = $1 ORDER BY idempotency_key, attempt`,
    [connectionId],
  );
  const receipts = await pool.query(
    `SELECT idempotency_key, external_id, provider_version, fields, heads, created_at FROM write_receipt
      WHERE connection_id = $1 ORDER BY idempotency_key`,
    [connectionId],
  );
  const links = await pool.query<{ external_id: string; provider_version: string | null; entity_id: string }>(
    `SELECT external_id, provider_version, entity_id::text, link_reason FROM source_link WHERE connection_id = $1
      ORDER BY external_id`,
    [connectionId],
  );
  const duplicates = await pool.query<{ entity_a: string; entity_b: string; evidence: string[] }>(
    'SELECT entity_a::text, entity_b::text, evidence FROM possible_duplicate WHERE workspace_id = $1 ORDER BY id',
    [ws.workspaceId],
  );
  return {
    claims: claims.rows,
    receipts: receipts.rows,
    links: links.rows.map((l) => ({ ...l, entity_id: named(l.entity_id) })),
    duplicates: duplicates.rows.map((d) => ({
      ...d,
      entity_a: named(d.entity_a),
      entity_b: named(d.entity_b),
    })),
  };
}

describe('folding our writes’ events', () => {
  // The sync stage folds a batch's claims and receipts in one statement, in which no part sees
  // another's rows: what one event does to another's (a claim its receipt settles, a claim its
  // record's later event finds expired, two receipts' versions of one record) is settled
  // before. The batch must leave what the same events folded one at a time leave.
  it('leaves the same claims, receipts and link versions in one batch as one event at a time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (steps) => {
        const together = await seeded();
        const alone = await seeded();
        await foldSteps(together, steps);
        for (const event of eventsOf(alone, steps))
          await inTransaction(pool, (tx) => foldWriteEvents(tx, [event]));
        expect(await stateOf(together)).toEqual(await stateOf(alone));
      }),
      { numRuns: 40, seed: 11 },
    );
  });

  it('settles a claim its receipt follows in the same batch, and drops one expired before its record’s next event', async () => {
    const ws = await seeded();
    const events = eventsOf(ws, [
      { kind: 'claim', record: 'b-1', key: 'k1', attempt: 0, later: false },
      {
        kind: 'receipt',
        record: 'b-1',
        key: 'k1',
        op: 'update',
        version: '2026-12-04T10:00:00.000Z',
        later: false,
      },
      { kind: 'claim', record: 'b-1', key: 'k2', attempt: 0, later: false },
      { kind: 'claim', record: 'b-1', key: 'k3', attempt: 0, later: true },
    ]);
    await inTransaction(pool, (tx) => foldWriteEvents(tx, events));
    const state = await stateOf(ws);
    expect(state.claims.map((c) => c.idempotency_key)).toEqual(['k3']);
    expect(state.receipts.map((r) => r.idempotency_key)).toEqual(['k1']);
    expect(state.links).toMatchObject([{ external_id: 'b-1', provider_version: '2026-12-04T10:00:00.000Z' }]);
  });

  it('leaves the version a refusal named on the link, unless the link holds a later one', async () => {
    const ws = await seeded();
    const versionOf = async () =>
      (await stateOf(ws)).links.find((l) => l.external_id === 'b-1')?.provider_version;
    await foldSteps(ws, [
      { kind: 'version', record: 'b-1', version: '2026-12-04T10:00:01.000Z', later: false },
    ]);
    expect(await versionOf()).toBe('2026-12-04T10:00:01.000Z');
    await foldSteps(ws, [{ kind: 'version', record: 'b-1', version: '2026-12-04T09:00:00Z', later: false }]);
    expect(await versionOf()).toBe('2026-12-04T10:00:01.000Z');
  });

  it('judges a refused create on the links the events before it left: the record our create made is another entity’s', async () => {
    const ws = await seeded();
    const events = eventsOf(ws, [
      // Ada's create made b-2; Grace's create, refused, names b-2 holding Grace's address.
      { kind: 'receipt', record: 'b-2', key: 'k1', op: 'create', version: null, later: false },
      { kind: 'existing', record: 'b-2', key: 'k4', who: 'grace', agrees: true, later: false },
      // Ada's create refused again on b-1, hers already: nothing changes.
      { kind: 'existing', record: 'b-1', key: 'k1', who: 'ada', agrees: true, later: false },
    ]);
    await inTransaction(pool, (tx) => foldWriteEvents(tx, events));
    const state = await stateOf(ws);
    expect(state.links.map((l) => [l.external_id, l.entity_id])).toEqual([
      ['b-1', 'ada'],
      ['b-2', 'ada'],
    ]);
    expect(state.duplicates).toEqual([
      {
        entity_a: 'grace',
        entity_b: 'ada',
        evidence: ['provider-refused-create', 'email:grace@navy.example'],
      },
    ]);
  });

  it('links a record nobody holds to the refused create’s entity when a key agrees, and leaves it when none does', async () => {
    const agreeing = await seeded();
    await foldSteps(agreeing, [
      { kind: 'existing', record: 'b-2', key: 'k4', who: 'grace', agrees: true, later: false },
    ]);
    expect((await stateOf(agreeing)).links).toMatchObject([
      { external_id: 'b-1', entity_id: 'ada' },
      {
        external_id: 'b-2',
        entity_id: 'grace',
        link_reason: { rule: 'provider-existing-record', evidence: ['email:grace@navy.example'], score: 1 },
      },
    ]);
    const disagreeing = await seeded();
    await foldSteps(disagreeing, [
      { kind: 'existing', record: 'b-2', key: 'k4', who: 'grace', agrees: false, later: false },
    ]);
    expect((await stateOf(disagreeing)).links.map((l) => l.external_id)).toEqual(['b-1']);
  });
});
