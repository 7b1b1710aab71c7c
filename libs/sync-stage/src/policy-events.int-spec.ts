import { MergeEngine, PgMergeStore, policyChangeInput, UnreadablePolicyEvent } from '@syncline/conflicts';
import { inTransaction } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { SyncStage } from './sync-stage';
import { contactEvent, type StageEvent, seedConnections, syncStage } from './testing/sync-stage';

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('policy_events');
  pool = new Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const t0 = Date.parse('2026-11-02T09:00:00.000Z');
const at = (s: number) => new Date(t0 + s * 1000);
const ADA = { email: 'ada@analytical.example', firstName: 'Ada', lastName: 'Lovelace' };

/** A `policy` event as the log hands it to the stage (policyChangeInput, as the API appends it). */
const policyEvent = (
  workspaceId: string,
  own: string,
  entityType: 'person' | 'deal',
  version: number,
  policies: Record<string, unknown>,
): StageEvent => {
  const input = policyChangeInput(workspaceId, own, { entityType, version, policies: {} }, at(version));
  return {
    ...input,
    eventTime: at(version),
    fields: { version, policies },
    fieldTimes: {},
    origin: null,
  };
};

/**
 * One batch: both CRMs hold Ada, then each sets her job title without having seen the other's
 * (a true conflict), and an admin's `policy` event making job titles manual stands `where` in
 * that batch. Returns the job title's conflicts and the policies in force after.
 */
async function concurrentTitles(where: 'before-edits' | 'between' | 'after-edits') {
  const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
  const { handle } = syncStage(pool);
  await handle(
    contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), ADA),
    contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), ADA),
  );
  const policy = policyEvent(ws.workspaceId, ws.own, 'person', 1, { jobTitle: { kind: 'manual' } });
  const fromA = contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ADA, jobTitle: 'Professor' });
  const fromB = contactEvent(ws.workspaceId, ws.b, 'b-1', at(11), { ...ADA, jobTitle: 'Countess' });
  const batch =
    where === 'before-edits'
      ? [policy, fromA, fromB]
      : where === 'between'
        ? [fromA, policy, fromB]
        : [fromA, fromB, policy];
  await handle(...batch);
  const { rows: conflicts } = await pool.query<{ policy: string; status: string }>(
    `SELECT policy, status::text AS status FROM merge_conflict WHERE workspace_id = $1 AND field = 'jobTitle'`,
    [ws.workspaceId],
  );
  const { rows: inForce } = await pool.query<{ entity_type: string; policies: unknown; version: number }>(
    'SELECT entity_type, policies, version FROM policy_in_force WHERE workspace_id = $1',
    [ws.workspaceId],
  );
  const { rows: entity } = await pool.query<{ fields: Record<string, unknown> }>(
    `SELECT e.fields FROM entity e JOIN source_link l ON l.entity_id = e.id WHERE l.connection_id = $1`,
    [ws.a],
  );
  return { conflicts, inForce, jobTitle: entity[0]?.fields.jobTitle };
}

describe('field policies on the log', () => {
  it('a policy event puts its set in force where it stands in the batch, not where the batch ends', async () => {
    const inForce = [{ entity_type: 'person', policies: { jobTitle: { kind: 'manual' } }, version: 1 }];
    // Before both edits: the second one meets manual and waits for a person.
    const before = await concurrentTitles('before-edits');
    expect(before.conflicts).toEqual([{ policy: 'manual', status: 'open' }]);
    expect(before.inForce).toEqual(inForce);
    // Between them: the second edit is the one that meets the conflict, under the new set.
    expect((await concurrentTitles('between')).conflicts).toEqual([{ policy: 'manual', status: 'open' }]);
    // After both: they were merged under lww (the later one wins), in the same batch.
    const after = await concurrentTitles('after-edits');
    expect(after.conflicts).toEqual([{ policy: 'lww', status: 'resolved' }]);
    expect(after.jobTitle).toBe('Countess');
    expect(after.inForce).toEqual(inForce);
  });

  it('a later set replaces the earlier one whole; a set of one workspace is no other’s', async () => {
    const ws = await seedConnections(pool, { own: 'syncline' });
    const other = await seedConnections(pool, { own: 'syncline' });
    const { handle } = syncStage(pool);
    await handle(
      policyEvent(ws.workspaceId, ws.own, 'deal', 1, {
        stage: { kind: 'manual' },
        amount: { kind: 'manual' },
      }),
      policyEvent(ws.workspaceId, ws.own, 'deal', 2, { stage: { kind: 'priority', order: ['user'] } }),
    );
    const { rows } = await pool.query(
      'SELECT workspace_id, entity_type, policies, version FROM policy_in_force WHERE workspace_id = ANY($1::uuid[])',
      [[ws.workspaceId, other.workspaceId]],
    );
    expect(rows).toEqual([
      {
        workspace_id: ws.workspaceId,
        entity_type: 'deal',
        policies: { stage: { kind: 'priority', order: ['user'] } },
        version: 2,
      },
    ]);
  });

  it('refuses a policy event it cannot read, so the consumer dead-letters it; nothing is put in force', async () => {
    const ws = await seedConnections(pool, { own: 'syncline' });
    const { handle } = syncStage(pool);
    const unreadable = policyEvent(ws.workspaceId, ws.own, 'person', 1, { jobTitle: { kind: 'coin-toss' } });
    await expect(handle(unreadable)).rejects.toBeInstanceOf(UnreadablePolicyEvent);
    const { rows } = await pool.query('SELECT 1 FROM policy_in_force WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    expect(rows).toEqual([]);
  });
});

describe('field policies on the log, across the members of the group', () => {
  it('a member that takes a partition back after another folded a policy event there reads the new set', async () => {
    const ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot', own: 'syncline' });
    // Two members of the sync group, each with its own merge engine (and its own cache).
    const member = () =>
      new SyncStage({
        identity: new IdentityService(),
        engine: new MergeEngine(new PgMergeStore(pool)),
        connectionsTtlMs: 0,
      });
    const [first, second] = [member(), member()];
    let offset = 0;
    const fold = (stage: SyncStage, ...batch: StageEvent[]) =>
      inTransaction(pool, (client) =>
        stage.handle(
          client,
          batch.map((e) => ({
            ...e,
            partition: 7,
            offset: ++offset,
            ingestedAt: new Date(),
            providerVersion: null,
          })),
        ),
      );
    await fold(
      first,
      contactEvent(ws.workspaceId, ws.a, 'a-1', at(0), ADA),
      contactEvent(ws.workspaceId, ws.b, 'b-1', at(1), ADA),
      contactEvent(ws.workspaceId, ws.a, 'a-1', at(10), { ...ADA, jobTitle: 'Professor' }),
    );
    // The partition moves to the second member, which folds an admin's new set; then back.
    await fold(second, policyEvent(ws.workspaceId, ws.own, 'person', 1, { jobTitle: { kind: 'manual' } }));
    await fold(first, contactEvent(ws.workspaceId, ws.b, 'b-1', at(11), { ...ADA, jobTitle: 'Countess' }));
    const { rows } = await pool.query<{ policy: string; status: string }>(
      `SELECT policy, status::text AS status FROM merge_conflict WHERE workspace_id = $1 AND field = 'jobTitle'`,
      [ws.workspaceId],
    );
    expect(rows).toEqual([{ policy: 'manual', status: 'open' }]);
  });
});
