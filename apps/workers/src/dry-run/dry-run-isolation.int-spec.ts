import { DERIVED_TABLE_NAMES } from '@syncline/log';
import { contactEvent, seedConnections, syncStage } from '@syncline/sync-stage/testing';
import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { storeDryRunReport } from './dry-run.service';
import { computeDryRunReport } from './dry-run-report';
import { ident, realSchema, SandboxViolation, SHADOWED, sandboxed, shadow } from './sandbox';

/**
 * The dry run's sandbox, proven on a real database: CRM A is live with three people merged;
 * CRM B is in dry run with its backfill staged (two of A's people, one of its own). The sync
 * stage's statements in the sandbox cannot reach a live derived row, and the dry-run job
 * leaves every live table as it was (its stored report aside).
 */

const T0 = new Date('2026-11-20T10:00:00.000Z');
const T1 = new Date('2026-11-21T10:00:00.000Z');
const PARTITIONS = 4;

let db: TestDatabase;
let pool: Pool;
let ws: { workspaceId: string; a: string; b: string };

const person = (externalId: string, fields: Record<string, unknown>) => ({
  entityType: 'person',
  externalId,
  eventKey: `contacts:${externalId}:${T1.getTime()}`,
  fields,
});

beforeAll(async () => {
  db = await createTestDatabase('dry_run_isolation');
  pool = new Pool({ connectionString: db.url, max: 4 });
  ws = await seedConnections(pool, { a: 'hubspot', b: 'hubspot' }, { reconciled: true });
  await pool.query(
    `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
      VALUES ($1, 'person', '{"jobTitle": {"kind": "manual"}}', 1)`,
    [ws.workspaceId],
  );
  const stage = syncStage(pool);
  await stage.handle(
    contactEvent(ws.workspaceId, ws.a, 'a-ada', T0, {
      email: 'ada@analytical.example',
      firstName: 'Ada',
      jobTitle: 'Analyst',
    }),
    contactEvent(ws.workspaceId, ws.a, 'a-alan', T0, {
      email: 'alan@bletchley.example',
      jobTitle: 'Cryptanalyst',
    }),
    contactEvent(ws.workspaceId, ws.a, 'a-grace', T0, { email: 'grace@navy.example', firstName: 'Grace' }),
  );
  await pool.query(`UPDATE connection SET dry_run = true, cursors = '{"live":{}}' WHERE id = $1`, [ws.b]);
  for (const change of [
    person('b-ada', { email: 'ada@analytical.example', company: 'Analytical Engines' }),
    person('b-alan', { email: 'alan@bletchley.example', jobTitle: 'Mathematician' }),
    person('b-linus', { email: 'linus@kernel.example', firstName: 'Linus' }),
  ])
    await pool.query(
      `INSERT INTO staged_change (workspace_id, connection_id, event_key, entity_type, external_id, op, fields, event_time)
       VALUES ($1, $2, $3, $4, $5, 'upsert', $6, $7)`,
      [ws.workspaceId, ws.b, change.eventKey, change.entityType, change.externalId, change.fields, T1],
    );
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** A transaction with the dry run's copies made, and the stage's connection into them. */
async function inSandbox<T>(work: (client: PoolClient, schema: string) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const schema = await realSchema(client);
    await shadow(client, schema, (t) => `${ident(schema)}.${ident(t)}`, ws.workspaceId, ws.b);
    await client.query('SET TRANSACTION READ ONLY');
    return await work(client, schema);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/** This transaction's reads and writes of each table so far (PostgreSQL counts them exactly, per transaction). */
async function tableTouches(client: PoolClient): Promise<Map<string, number>> {
  const { rows } = await client.query<{ schema: string; table: string; touches: string }>(
    `SELECT schemaname AS schema, relname AS table,
            (COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) + n_tup_ins + n_tup_upd + n_tup_del)::text AS touches
       FROM pg_stat_xact_user_tables`,
  );
  return new Map(
    rows.map((r) => [
      `${r.schema.startsWith('pg_temp') ? 'pg_temp' : r.schema}.${r.table}`,
      Number(r.touches),
    ]),
  );
}

describe("the dry run's sandbox", () => {
  it('refuses every statement naming the real schema, however written, or touching the search path', async () => {
    await inSandbox(async (client, schema) => {
      const tx = await sandboxed(client, schema);
      for (const sql of [
        'SELECT * FROM public.entity',
        'SELECT * FROM "public"."entity"',
        'select count(*) from PUBLIC . source_link',
        `SELECT * FROM ${ident(schema)}.outbox`,
        'SELECT e.id FROM entity e JOIN public.source_link l ON l.entity_id = e.id',
        `SET search_path = public`,
        `SELECT set_config('search_path', 'public', true)`,
      ])
        await expect(tx.query(sql, []), sql).rejects.toThrow(SandboxViolation);
    });
  });

  it('resolves every derived table the stage names, unqualified, to its copy', async () => {
    await inSandbox(async (client, schema) => {
      const tx = await sandboxed(client, schema);
      for (const table of [...DERIVED_TABLE_NAMES, 'connection']) {
        const { rows } = await tx.query<{ copy: boolean }>(
          `SELECT c.relnamespace = pg_my_temp_schema() AS copy FROM pg_class c WHERE c.oid = $1::regclass`,
          [table],
        );
        expect(rows, table).toEqual([{ copy: true }]);
      }
      expect(SHADOWED.map((s) => s.table)).toEqual(expect.arrayContaining([...DERIVED_TABLE_NAMES]));
    });
  });

  it('runs the whole sync stage without reading or writing one live row of a copied table', async () => {
    const seen: Map<string, number>[] = [];
    const report = await computeDryRunReport(pool, ws.b, {
      partitions: PARTITIONS,
      aroundStage: async (client) => void seen.push(await tableTouches(client)),
    });
    // The stage did run: B's people link to A's, one is new, a conflict is raised.
    expect(report.summary).toMatchObject({ links: 2, creations: 1, failures: 0 });
    expect(report.summary.conflicts).toBeGreaterThan(0);
    const [before, after] = seen;
    if (before === undefined || after === undefined) throw new Error('the stage hooks did not run');
    const touched = (table: string) => (after.get(table) ?? 0) - (before.get(table) ?? 0);
    const copied = SHADOWED.map((s) => s.table);
    expect(copied.filter((t) => touched(`public.${t}`) !== 0)).toEqual([]);
    // …while the copies were read and written (the counts do see the stage's work).
    for (const table of ['entity', 'source_link', 'outbox'])
      expect(touched(`pg_temp.${table}`)).toBeGreaterThan(0);
  });
});

describe('the dry-run job', () => {
  /** Every live table's row count and a checksum of its rows, and every sequence's position. */
  const liveState = async () => {
    const state: Record<string, unknown> = {};
    const { rows: tables } = await pool.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`,
    );
    for (const { name } of tables) {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS rows, md5(COALESCE(string_agg(t::text, '|' ORDER BY t::text), '')) AS checksum
           FROM ${ident(name)} t`,
      );
      state[name] = rows[0];
    }
    const { rows: sequences } = await pool.query(
      `SELECT sequencename AS name, last_value::text FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1`,
    );
    state.sequences = sequences;
    return state;
  };

  it('writes nothing outside its sandbox but its stored report', async () => {
    const before = await liveState();
    expect(before.entity).toMatchObject({ rows: 3 });
    const outcome = await storeDryRunReport(pool, ws.b, { partitions: PARTITIONS });
    expect(outcome).toMatchObject({ status: 'stored', complete: true });
    const after = await liveState();
    expect({ ...after, dry_run_report: null }).toEqual({ ...before, dry_run_report: null });
    const { rows } = await pool.query<{ connection_id: string; links: number }>(
      `SELECT connection_id::text, (report -> 'summary' ->> 'links')::int AS links FROM dry_run_report`,
    );
    expect(rows).toEqual([{ connection_id: ws.b, links: 2 }]);
  });
});
