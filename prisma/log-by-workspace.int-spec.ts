import { randomUUID } from 'node:crypto';
import { partitionFor } from '@syncline/log';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase, type TestDatabase } from '../test/support/database';
import { MIGRATIONS_DIR, migrate, readMigrations } from './migrator';
import { createMigrationDir, type MigrationDir } from './test-support/migration-dir';

/**
 * Migration 20261214000000_log_by_workspace moves a log partitioned by record onto one
 * partition per workspace. Built here: a log of 4 partitions as the per-record key left it
 * (two workspaces, records spread over partitions, the `sync` group part way through, another
 * group behind it, a dead letter), then migrated.
 */
const MIGRATION = '20261214000000_log_by_workspace';
const PARTITIONS = 4;

let db: TestDatabase;
let dir: MigrationDir;
let client: Client;

interface Event {
  workspace: string;
  record: string;
  n: number;
  partition: number;
  offset: number;
  folded: boolean;
}

const workspaces = [randomUUID(), randomUUID()];
const events: Event[] = [];

beforeAll(async () => {
  db = await createEmptyDatabase('log-by-workspace');
  dir = await createMigrationDir();
  for (const m of await readMigrations(MIGRATIONS_DIR))
    if (m.name < MIGRATION) await dir.write(m.name, m.sql);
  await migrate(db.url, dir.path);
  client = new Client({ connectionString: db.url });
  await client.connect();
  await client.query('INSERT INTO log_partition (partition) SELECT generate_series(0, $1::int - 1)', [
    PARTITIONS,
  ]);
  const connection = new Map<string, string>();
  for (const [i, ws] of workspaces.entries()) {
    const conn = randomUUID();
    connection.set(ws, conn);
    await client.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [ws, `ws-${i}`]);
    await client.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status) VALUES ($1, $2, 'hubspot', $3, 'live')`,
      [conn, ws, `portal-${i}`],
    );
  }
  // 120 events: 6 records of each workspace, 10 changes each, spread over the partitions by
  // record, appended in rounds (so partitions interleave in time), each partition's offsets in order.
  const heads = new Array(PARTITIONS).fill(0);
  const committed = [5, 0, 9, 3];
  const behind = [2, 0, 1, 3];
  const base = Date.parse('2026-11-01T10:00:00Z');
  for (let round = 0; round < 10; round++) {
    for (const [w, ws] of workspaces.entries()) {
      for (let r = 0; r < 6; r++) {
        const partition = (w * 6 + r) % PARTITIONS;
        const offset = ++heads[partition];
        const record = `w${w}-r${r}`;
        events.push({
          workspace: ws,
          record,
          n: round,
          partition,
          offset,
          folded: offset <= committed[partition]!,
        });
        await client.query(
          `INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                                     external_id, op, fields, event_time, ingested_at)
           VALUES ($1, $2, $3, $4, $5, 'person', $6, 'upsert', $7, $8, $9)`,
          [
            partition,
            offset,
            ws,
            connection.get(ws),
            `${record}:${round}`,
            record,
            JSON.stringify({ n: round }),
            new Date(base + round * 1000),
            // Each round a little later; within a round, one second apart per workspace.
            new Date(base + round * 10_000 + w * 1000),
          ],
        );
      }
    }
  }
  await client.query(
    'UPDATE log_partition SET next_offset = t.h + 1 FROM unnest($1::int[]) WITH ORDINALITY t(h, p) WHERE partition = t.p - 1',
    [heads],
  );
  await client.query(
    `INSERT INTO consumer_offset (group_name, partition, committed_offset)
     SELECT 'sync', p - 1, c FROM unnest($1::bigint[]) WITH ORDINALITY t(c, p)
     UNION ALL SELECT 'audit', p - 1, c FROM unnest($2::bigint[]) WITH ORDINALITY t(c, p)`,
    [committed, behind],
  );
  await client.query(
    `INSERT INTO consumer_batch (group_name, seq, partition, since_offset, last_offset) VALUES ('sync', 1, 0, 0, 5)`,
  );
  const poison = events.find((e) => e.partition === 2 && e.offset === 4)!;
  await client.query(
    `INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id, event_key, payload, error_code, error_message)
     VALUES ($1, $2, 'log', 'sync', 2, 4, $3, $4, '{}', 'Handler', 'poison')`,
    [randomUUID(), poison.workspace, connection.get(poison.workspace), `${poison.record}:${poison.n}`],
  );
  // A letter whose event retention has deleted since.
  await client.query(
    `INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id, event_key, payload, error_code, error_message)
     VALUES ($1, $2, 'log', 'sync', 1, 999, $3, 'gone:1', '{}', 'Handler', 'poison')`,
    [randomUUID(), workspaces[0], connection.get(workspaces[0]!)],
  );
  await migrate(db.url);
}, 120_000);

afterAll(async () => {
  await client?.end();
  await dir?.remove();
  await db?.drop();
});

const moved = async () =>
  (
    await client.query<{
      workspace_id: string;
      partition: number;
      offset: string;
      record: string;
      n: number;
    }>(
      `SELECT workspace_id, partition, "offset", external_id AS record, (fields->>'n')::int AS n
         FROM change_event ORDER BY partition, "offset"`,
    )
  ).rows.map((r) => ({ ...r, offset: Number(r.offset) }));

describe('migration: the log by workspace', () => {
  it('computes the partition in SQL as partitionFor does in TypeScript', async () => {
    const ids = Array.from({ length: 200 }, () => randomUUID());
    const counts = [1, 4, 16, 1024];
    const { rows } = await client.query<{ p: number }>(
      `SELECT syncline_log_partition(id, n) AS p FROM unnest($1::text[]) id CROSS JOIN unnest($2::int[]) n
        ORDER BY id, n`,
      [ids, counts],
    );
    const expected = [...ids]
      .sort()
      .flatMap((id) => [...counts].sort((a, b) => a - b).map((n) => partitionFor(id, n)));
    expect(rows.map((r) => r.p)).toEqual(expected);
  });

  it("puts every event on its workspace's partition, loses none, and keeps each record's order", async () => {
    const rows = await moved();
    expect(rows).toHaveLength(events.length);
    for (const r of rows) expect(r.partition).toBe(partitionFor(r.workspace_id, PARTITIONS));
    const byRecord = new Map<string, number[]>();
    for (const r of rows) byRecord.set(r.record, [...(byRecord.get(r.record) ?? []), r.n]);
    for (const ns of byRecord.values()) expect(ns).toEqual([...Array(10).keys()]);
  });

  it('numbers each partition densely from 1 and moves its head past the last', async () => {
    const rows = await moved();
    const { rows: heads } = await client.query<{ partition: number; next_offset: string }>(
      'SELECT partition, next_offset FROM log_partition ORDER BY partition',
    );
    for (const h of heads) {
      const offsets = rows.filter((r) => r.partition === h.partition).map((r) => r.offset);
      expect(offsets).toEqual(offsets.map((_, i) => i + 1));
      expect(Number(h.next_offset)).toBe(offsets.length + 1);
    }
  });

  it('puts what the sync group folded first, so its new offset folds nothing twice and skips nothing', async () => {
    const rows = await moved();
    const { rows: offsets } = await client.query<{
      group_name: string;
      partition: number;
      committed_offset: string;
    }>('SELECT group_name, partition, committed_offset FROM consumer_offset ORDER BY group_name, partition');
    const sync = new Map(
      offsets.filter((o) => o.group_name === 'sync').map((o) => [o.partition, Number(o.committed_offset)]),
    );
    for (const p of [...Array(PARTITIONS).keys()]) {
      const here = rows.filter((r) => r.partition === p);
      const committed = sync.get(p)!;
      const folded = new Set(events.filter((e) => e.folded).map((e) => `${e.record}:${e.n}`));
      expect(here.slice(0, committed).every((r) => folded.has(`${r.record}:${r.n}`))).toBe(true);
      expect(here.slice(committed).some((r) => folded.has(`${r.record}:${r.n}`))).toBe(false);
    }
    expect([...sync.values()].reduce((a, b) => a + b, 0)).toBe(events.filter((e) => e.folded).length);
    // A group behind the sync group keeps only the prefix it had consumed: it never skips an event.
    const audit = offsets.filter((o) => o.group_name === 'audit');
    expect(audit).toHaveLength(PARTITIONS);
    const consumedByAudit = new Set(
      events.filter((e) => e.offset <= [2, 0, 1, 3][e.partition]!).map((e) => `${e.record}:${e.n}`),
    );
    for (const o of audit) {
      const here = rows.filter((r) => r.partition === o.partition);
      expect(
        here.slice(0, Number(o.committed_offset)).every((r) => consumedByAudit.has(`${r.record}:${r.n}`)),
      ).toBe(true);
    }
  });

  it('moves a dead letter with its event and empties the journal of batches', async () => {
    const { rows } = await client.query<{ partition: number; offset: string; event_key: string }>(
      `SELECT d.partition, d."offset", d.event_key FROM dead_letter d ORDER BY d.event_key = 'gone:1'`,
    );
    expect(rows[1]).toMatchObject({ event_key: 'gone:1', partition: null, offset: null });
    const { rows: at } = await client.query<{ event_key: string }>(
      'SELECT event_key FROM change_event WHERE partition = $1 AND "offset" = $2',
      [rows[0]!.partition, rows[0]!.offset],
    );
    expect(at[0]?.event_key).toBe(rows[0]!.event_key);
    const { rowCount } = await client.query('SELECT 1 FROM consumer_batch');
    expect(rowCount).toBe(0);
  });
});
