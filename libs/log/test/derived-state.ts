import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { LogHandler } from '../src';

/**
 * A test handler that derives order-sensitive state: per source record, the number of
 * events applied and a hash chained over their offsets and values. Applying an event
 * twice, skipping one or reordering two all change the result. Every application is also
 * recorded in derived_applied (with no unique key), so a double application is visible.
 */
export const DERIVED_DDL = `
CREATE TABLE IF NOT EXISTS derived_state (
  group_name text NOT NULL, external_id text NOT NULL, events int NOT NULL, chain text NOT NULL,
  PRIMARY KEY (group_name, external_id));
CREATE TABLE IF NOT EXISTS derived_applied (
  group_name text NOT NULL, partition int NOT NULL, "offset" bigint NOT NULL, pid int NOT NULL)`;

export async function createDerivedTables(pool: Pool): Promise<void> {
  await pool.query(DERIVED_DDL);
}

export const derivedStateHandler: LogHandler = async (tx, events, { group }) => {
  const ids = [...new Set(events.map((e) => e.externalId))];
  const { rows } = await tx.query<{ external_id: string; events: number; chain: string }>(
    'SELECT external_id, events, chain FROM derived_state WHERE group_name = $1 AND external_id = ANY($2) FOR UPDATE',
    [group, ids],
  );
  const state = new Map(rows.map((r) => [r.external_id, { events: r.events, chain: r.chain }]));
  for (const e of events) {
    const prev = state.get(e.externalId) ?? { events: 0, chain: '' };
    const chain = createHash('sha1')
      .update(`${prev.chain}|${e.eventKey}|${JSON.stringify(e.fields)}`)
      .digest('hex');
    state.set(e.externalId, { events: prev.events + 1, chain });
  }
  const keys = [...state.keys()];
  await tx.query(
    `INSERT INTO derived_state (group_name, external_id, events, chain)
     SELECT $1, * FROM unnest($2::text[], $3::int[], $4::text[])
     ON CONFLICT (group_name, external_id) DO UPDATE SET events = EXCLUDED.events, chain = EXCLUDED.chain`,
    [group, keys, keys.map((k) => state.get(k)!.events), keys.map((k) => state.get(k)!.chain)],
  );
  await tx.query(
    `INSERT INTO derived_applied (group_name, partition, "offset", pid)
     SELECT $1, partition, o, $4 FROM unnest($2::int[], $3::bigint[]) AS t(partition, o)`,
    [group, events.map((e) => e.partition), events.map((e) => e.offset), process.pid],
  );
};

/** The derived state of a group as one comparable string. */
export async function derivedSnapshot(pool: Pool, group: string): Promise<string> {
  const { rows } = await pool.query<{ s: string | null }>(
    `SELECT string_agg(external_id || ':' || events || ':' || chain, ',' ORDER BY external_id) AS s
       FROM derived_state WHERE group_name = $1`,
    [group],
  );
  return rows[0]?.s ?? '';
}

export async function duplicateApplications(pool: Pool, group: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM derived_applied WHERE group_name = $1
       GROUP BY partition, "offset" HAVING count(*) > 1) d`,
    [group],
  );
  return rows[0]!.n;
}
