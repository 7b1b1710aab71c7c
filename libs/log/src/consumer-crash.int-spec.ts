import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { change, type SeededConnection, seedOnePerPartition } from '../../../test/support/fixtures';
import { type Child, startConsumerChild } from '../test/child-process';
import {
  createDerivedTables,
  derivedSnapshot,
  derivedStateHandler,
  duplicateApplications,
} from '../test/derived-state';
import { ChangeLog } from './change-log';
import { LogConsumer } from './consumer-group';
import { groupLag } from './group-admin';

// Consumers in processes of their own, killed with SIGKILL: no cleanup code runs, the
// connection simply drops, as in a crash or an OOM kill.

const PARTITIONS = 8;
let db: TestDatabase;
let pool: Pool;
let log: ChangeLog;
/** One workspace per partition: the records spread over every partition. */
let spread: SeededConnection[];
let appended = 0;

beforeAll(async () => {
  db = await createTestDatabase('crash');
  pool = new Pool({ connectionString: db.url, max: 4 });
  log = new ChangeLog(pool, { partitions: PARTITIONS });
  await log.init();
  await createDerivedTables(pool);
  spread = await seedOnePerPartition(pool, PARTITIONS, (c) => log.partitionOf(c));
});

afterAll(async () => {
  await log.close();
  await pool.end();
  await db.drop();
});

async function appendBatch(n: number, records = 150): Promise<void> {
  const from = appended;
  appended += n;
  const res = await log.append(
    Array.from({ length: n }, (_, k) =>
      change(spread[((from + k) % records) % spread.length]!, {
        externalId: `rec-${(from + k) % records}`,
        eventKey: `e:${from + k}`,
        fields: { v: from + k },
      }),
    ),
  );
  if (!res.ok) throw new Error(res.error.message);
}

const committedTotal = async (group: string) =>
  (await groupLag(pool, group)).reduce((sum, p) => sum + p.committedOffset, 0);
const lagOf = async (group: string) => (await groupLag(pool, group)).reduce((sum, p) => sum + p.lag, 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function kill(child: Child): Promise<void> {
  child.proc.kill('SIGKILL');
  await child.exited;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

describe('consumer crash safety', () => {
  it.each([
    ['one partition', 'crashy', '1'],
    ['four partitions', 'crashy4', '4'],
  ])(
    'resumes from the last commit after SIGKILL at many points, deriving what an uninterrupted run derives (%s per transaction)',
    async (_label, group, perBatch) => {
      const childArgs = [db.url, group, String(PARTITIONS), '15', perBatch];
      // Long enough that the kills land inside it: a member applies several thousand events a second.
      await appendBatch(16_000);
      const progress: number[] = [];
      const kills = 14;
      for (let i = 0; i < kills; i++) {
        const child = startConsumerChild(childArgs);
        await child.ready;
        // The stream keeps growing while members die.
        if (i % 3 === 0) await appendBatch(1_000);
        await sleep(20 + Math.floor(Math.random() * 350));
        await kill(child);
        progress.push(await committedTotal(group));
      }
      const last = startConsumerChild(childArgs);
      await last.ready;
      await waitFor(async () => (await lagOf(group)) === 0, 60_000);
      last.proc.kill('SIGTERM');
      await last.exited;

      // The kills landed inside the stream, not all before it started or after it ended.
      const midStream = progress.filter((p) => p > 0 && p < appended).length;
      expect(midStream).toBeGreaterThanOrEqual(kills / 2);
      expect(new Set(progress).size).toBeGreaterThan(kills / 2);

      const reference = new LogConsumer({
        connection: db.url,
        group: `reference-${group}`,
        partitions: PARTITIONS,
        handler: derivedStateHandler,
      });
      await reference.start();
      await reference.processAvailable();
      await reference.stop();

      expect(await duplicateApplications(pool, group)).toBe(0);
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM derived_applied WHERE group_name = $1`,
        [group],
      );
      expect(rows[0]!.n).toBe(appended);
      const expected = await derivedSnapshot(pool, `reference-${group}`);
      expect(expected.split(',')).toHaveLength(150);
      expect(await derivedSnapshot(pool, group)).toBe(expected);
    },
  );

  it('two member processes never both apply a partition, and the survivor takes over a killed one', async () => {
    const group = 'pair';
    const a = startConsumerChild([db.url, group, String(PARTITIONS), '10']);
    const b = startConsumerChild([db.url, group, String(PARTITIONS), '10']);
    await Promise.all([a.ready, b.ready]);
    await appendBatch(1500);
    // Both members share the group: each applies part of the stream.
    await waitFor(async () => {
      const { rows } = await pool.query<{ pid: number }>(
        `SELECT DISTINCT pid FROM derived_applied WHERE group_name = $1`,
        [group],
      );
      return rows.length === 2;
    }, 30_000);
    await kill(a);
    await appendBatch(500);
    await waitFor(async () => (await lagOf(group)) === 0, 60_000);
    // Every partition head was reached by the survivor alone after the kill.
    const after = await pool.query<{ pid: number; n: number }>(
      `SELECT pid, count(*)::int AS n FROM derived_applied d
        WHERE group_name = $1 AND "offset" > 0 GROUP BY pid ORDER BY n DESC`,
      [group],
    );
    expect(after.rows.map((r) => r.pid)).toContain(b.proc.pid);
    b.proc.kill('SIGTERM');
    await b.exited;
    expect(await duplicateApplications(pool, group)).toBe(0);
    const total = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM derived_applied WHERE group_name = $1`,
      [group],
    );
    expect(total.rows[0]!.n).toBe(appended);
    const lastByPartition = await pool.query<{ pid: number }>(
      `SELECT DISTINCT ON (partition) pid FROM derived_applied WHERE group_name = $1 ORDER BY partition, "offset" DESC`,
      [group],
    );
    expect(new Set(lastByPartition.rows.map((r) => r.pid))).toEqual(new Set([b.proc.pid]));
  });
});
