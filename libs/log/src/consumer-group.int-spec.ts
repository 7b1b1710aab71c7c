import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';

const createEmptyOtherDatabase = () => createTestDatabase('consumer_other');

import {
  change,
  type SeededConnection,
  seedConnection,
  seedOnePerPartition,
} from '../../../test/support/fixtures';
import {
  createDerivedTables,
  derivedSnapshot,
  derivedStateHandler,
  duplicateApplications,
} from '../test/derived-state';
import { ChangeLog } from './change-log';
import { type ConsumerOptions, LogConsumer } from './consumer-group';
import { enforceRetention, GroupBusyError, groupLag, resetGroup } from './group-admin';

const PARTITIONS = 8;
let db: TestDatabase;
let pool: Pool;
let log: ChangeLog;
let conn: SeededConnection;
/** One workspace per partition, so what appendMany appends spreads over every partition. */
let spread: SeededConnection[];
const consumers: LogConsumer[] = [];

beforeAll(async () => {
  db = await createTestDatabase('consumer');
  pool = new Pool({ connectionString: db.url, max: 6 });
  log = new ChangeLog(pool, { partitions: PARTITIONS });
  await log.init();
  await createDerivedTables(pool);
  conn = await seedConnection(pool);
  spread = await seedOnePerPartition(pool, PARTITIONS, (c) => log.partitionOf(c));
});

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
});

afterAll(async () => {
  await log.close();
  await pool.end();
  await db.drop();
});

function consumer(
  group: string,
  overrides: Partial<ConstructorParameters<typeof LogConsumer>[0]> = {},
): LogConsumer {
  const c = new LogConsumer({
    connection: db.url,
    group,
    partitions: PARTITIONS,
    handler: derivedStateHandler,
    pollMs: 20,
    rebalanceMs: 50,
    ...overrides,
  });
  consumers.push(c);
  return c;
}

async function appendMany(prefix: string, n: number, records = 25): Promise<void> {
  const changes = Array.from({ length: n }, (_, i) =>
    change(spread[(i % records) % spread.length]!, {
      externalId: `${prefix}-${i % records}`,
      eventKey: `${prefix}:${i}`,
      fields: { v: i },
    }),
  );
  const res = await log.append(changes);
  if (!res.ok) throw new Error(res.error.message);
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A database of its own with a one-partition log holding `n` changes of `records` records, for a
 * test that reads exactly how its batches fall; its consumers are stopped and it is dropped after.
 */
async function withOwnLog(
  name: string,
  n: number,
  records: number,
  test: (own: { url: string; pool: Pool }) => Promise<void>,
): Promise<void> {
  const own = await createTestDatabase(name);
  const ownPool = new Pool({ connectionString: own.url, max: 2 });
  try {
    const ownLog = new ChangeLog(ownPool, { partitions: 1 });
    await ownLog.init();
    await createDerivedTables(ownPool);
    const only = await seedConnection(ownPool);
    const appended = await ownLog.append(
      Array.from({ length: n }, (_, i) =>
        change(only, { externalId: `${name}-${i % records}`, eventKey: `${name}:${i}`, fields: { v: i } }),
      ),
    );
    await ownLog.close();
    expect(appended.ok).toBe(true);
    await test({ url: own.url, pool: ownPool });
  } finally {
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
    await ownPool.end();
    await own.drop();
  }
}

const caughtUp = (group: string) => async () => (await groupLag(pool, group)).every((p) => p.lag === 0);

describe('LogConsumer', () => {
  it('applies every event once, in order, committing offsets with the derived state', async () => {
    await appendMany('a', 400);
    const c = consumer('g-basic', { batchSize: 37 });
    await c.start();
    await until(caughtUp('g-basic'));
    expect(await duplicateApplications(pool, 'g-basic')).toBe(0);
    const { rows } = await pool.query<{ n: number }>(
      `SELECT sum(events)::int AS n FROM derived_state WHERE group_name = 'g-basic'`,
    );
    expect(rows[0]!.n).toBe(400);
    // A second member of another group derives exactly the same state.
    const ref = consumer('g-basic-ref', { batchSize: 500 });
    await ref.start();
    await until(caughtUp('g-basic-ref'));
    expect(await derivedSnapshot(pool, 'g-basic')).toBe(await derivedSnapshot(pool, 'g-basic-ref'));
  });

  it('reports a lag of 0 once caught up, even when redeliveries at the tail used up offsets', async () => {
    const last = change(conn, { externalId: 'tail', eventKey: 'tail:1' });
    await log.append([last]);
    const again = await log.append([last, last]);
    expect(again.ok && again.value.every((r) => !r.isNew)).toBe(true);
    const c = consumer('g-tail');
    await c.start();
    await until(caughtUp('g-tail'));
    const lag = await groupLag(pool, 'g-tail');
    const p = log.partitionOf(conn);
    const head = await pool.query<{ next: string }>(
      'SELECT next_offset AS next FROM log_partition WHERE partition = $1',
      [p],
    );
    // The redelivery burned a number past the last event; lag is still measured to the last event.
    expect(Number(head.rows[0]!.next) - 1).toBeGreaterThan(lag.find((x) => x.partition === p)!.headOffset);
    expect(lag.every((x) => x.lag === 0)).toBe(true);
  });

  it('wakes on append without waiting for the poll interval', async () => {
    const c = consumer('g-wake', { pollMs: 60_000, rebalanceMs: 60_000 });
    await c.start();
    await until(caughtUp('g-wake'));
    const before = Date.now();
    await appendMany('wake', 3);
    await until(caughtUp('g-wake'), 5_000);
    expect(Date.now() - before).toBeLessThan(5_000);
  });

  it.each([
    ['g-poison', 1],
    ['g-poison-multi', 4],
  ])(
    'dead-letters a poison event after its attempts and keeps the partition moving (%s)',
    async (group, partitionsPerBatch) => {
      const poisonKey = `poison:${group}`;
      const record = `p-${group}`;
      let poisonTries = 0;
      const c = consumer(group, {
        maxAttempts: 3,
        partitionsPerBatch,
        handler: async (tx, events, ctx) => {
          if (events.some((e) => e.eventKey === poisonKey)) {
            if (events.length === 1) poisonTries++;
            throw new Error('cannot map field "v"');
          }
          await derivedStateHandler(tx, events, ctx);
        },
      });
      await log.append([
        change(conn, { externalId: record, eventKey: `before:${group}` }),
        change(conn, { externalId: record, eventKey: poisonKey }),
        change(conn, { externalId: record, eventKey: `after:${group}` }),
        // Other partitions' events share the multi-partition transaction.
        ...Array.from({ length: 12 }, (_, i) =>
          change(conn, { externalId: `${record}-other-${i}`, eventKey: `other:${group}:${i}` }),
        ),
      ]);
      await c.start();
      await until(caughtUp(group));
      expect(poisonTries).toBe(3);
      const dl = await pool.query(
        `SELECT event_key, error_code, error_message, attempts, status, workspace_id FROM dead_letter WHERE group_name = $1`,
        [group],
      );
      expect(dl.rows).toEqual([
        {
          event_key: poisonKey,
          error_code: 'HandlerFailed',
          error_message: 'cannot map field "v"',
          attempts: 3,
          status: 'open',
          workspace_id: conn.workspaceId,
        },
      ]);
      const st = await pool.query(
        `SELECT external_id, events FROM derived_state WHERE group_name = $1 AND external_id LIKE $2`,
        [group, `${record}%`],
      );
      // Two of the poisoned record's three events, and each other record's one.
      expect(st.rows).toHaveLength(13);
      expect(st.rows.find((r) => r.external_id === record)?.events).toBe(2);
      expect(st.rows.filter((r) => r.external_id !== record).every((r) => r.events === 1)).toBe(true);
    },
  );

  it('a deadlock is retried as a whole batch after a pause, never dead-lettered', async () => {
    let deadlocks = 0;
    const c = consumer('g-deadlock', {
      maxAttempts: 1,
      pollMs: 50,
      handler: async (tx, events, ctx) => {
        if (events.some((e) => e.eventKey === 'contended:1') && deadlocks < 4) {
          deadlocks++;
          throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        }
        await derivedStateHandler(tx, events, ctx);
      },
    });
    await log.append([
      change(conn, { externalId: 'd-1', eventKey: 'contended:0' }),
      change(conn, { externalId: 'd-1', eventKey: 'contended:1' }),
    ]);
    await c.start();
    await until(caughtUp('g-deadlock'));
    expect(deadlocks).toBe(4);
    const dl = await pool.query(`SELECT 1 FROM dead_letter WHERE group_name = 'g-deadlock'`);
    expect(dl.rows).toEqual([]);
    const st = await pool.query(
      `SELECT events FROM derived_state WHERE group_name = 'g-deadlock' AND external_id = 'd-1'`,
    );
    expect(st.rows[0].events).toBe(2);
  });

  it('shares partitions between members without overlap, and the survivor takes over', async () => {
    await appendMany('share', 600, 60);
    const a = consumer('g-share', { batchSize: 10 });
    const b = consumer('g-share', { batchSize: 10 });
    await a.start();
    await b.start();
    const overlaps: number[] = [];
    let bothHeld = false;
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      const mine = new Set(a.ownedPartitions());
      const theirs = b.ownedPartitions();
      overlaps.push(...theirs.filter((p) => mine.has(p)));
      if (mine.size === PARTITIONS / 2 && theirs.length === PARTITIONS / 2) bothHeld = true;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(overlaps).toEqual([]);
    expect(bothHeld).toBe(true);
    await a.stop();
    await until(async () => b.ownedPartitions().length === PARTITIONS);
    await appendMany('share-after', 100, 30);
    await until(caughtUp('g-share'));
    expect(await duplicateApplications(pool, 'g-share')).toBe(0);
    const { rows } = await pool.query<{ applied: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM derived_applied WHERE group_name = 'g-share') AS applied,
              (SELECT count(*)::int FROM change_event) AS events`,
    );
    expect(rows[0]!.applied).toBe(rows[0]!.events);
  });

  it('counts only its own database’s members: a group of the same name in another database takes nothing from its share', async () => {
    const other = await createEmptyOtherDatabase();
    try {
      // Two members of the same group name elsewhere on the server; one here.
      const elsewhere = [0, 1].map(
        () =>
          new LogConsumer({
            connection: other.url,
            group: 'shared-name',
            partitions: PARTITIONS,
            handler: async () => {},
            pollMs: 20,
            rebalanceMs: 50,
          }),
      );
      for (const c of elsewhere) await c.start();
      try {
        const here = consumer('shared-name');
        await here.start();
        await new Promise((r) => setTimeout(r, 300));
        await here.rebalance();
        expect(here.ownedPartitions()).toEqual(Array.from({ length: PARTITIONS }, (_, i) => i));
      } finally {
        for (const c of elsewhere) await c.stop();
      }
    } finally {
      await other.drop();
    }
  });

  it('tells afterCommit whether a whole batch or more still waits after each batch (behind)', async () => {
    await withOwnLog('consumer_behind', 230, 7, async (own) => {
      const seen: { events: number; partitions: readonly number[]; behind: boolean }[] = [];
      const c = new LogConsumer({
        connection: own.url,
        group: 'g-behind',
        partitions: 1,
        batchSize: 50,
        handler: derivedStateHandler,
        pollMs: 20,
        afterCommit: (events, { partitions, behind }) => {
          seen.push({ events: events.length, partitions, behind });
        },
      });
      consumers.push(c);
      await c.start();
      await until(async () => seen.reduce((n, s) => n + s.events, 0) === 230);
      // 180, 130, 80, 30 and 0 events left after the five batches; a batch is 50.
      expect(seen).toEqual([
        { events: 50, partitions: [0], behind: true },
        { events: 50, partitions: [0], behind: true },
        { events: 50, partitions: [0], behind: true },
        { events: 50, partitions: [0], behind: false },
        { events: 30, partitions: [0], behind: false },
      ]);
      expect(c.behind()).toBe(false);
    });
  });

  it('grows its batches while they come back full and quick, up to maxBatchSize, and folds the same state', async () => {
    await withOwnLog('consumer_grows', 1_000, 13, async (own) => {
      const run = async (group: string, options: Partial<ConsumerOptions>) => {
        const sizes: number[] = [];
        const c = new LogConsumer({
          connection: own.url,
          group,
          partitions: 1,
          batchSize: 50,
          handler: derivedStateHandler,
          pollMs: 20,
          afterCommit: (events) => {
            sizes.push(events.length);
          },
          ...options,
        });
        consumers.push(c);
        await c.start();
        await until(async () => sizes.reduce((n, s) => n + s, 0) === 1_000);
        await c.stop();
        return sizes;
      };
      // A target no batch here comes near: full batches grow (doubling at most), to the max.
      const grown = await run('g-grows', { maxBatchSize: 300, batchTargetMs: 60_000 });
      expect(grown[0]).toBe(50);
      expect(grown[1]).toBe(100);
      expect(Math.max(...grown)).toBeLessThanOrEqual(300);
      for (let i = 1; i < grown.length; i++) expect(grown[i]!).toBeLessThanOrEqual(2 * grown[i - 1]!);
      // Without a max above the base, batches stay at the base.
      expect(await run('g-fixed', {})).toEqual(Array.from({ length: 20 }, () => 50));
      expect(await derivedSnapshot(own.pool, 'g-grows')).toBe(await derivedSnapshot(own.pool, 'g-fixed'));
    });
  });

  it('replays from offset 0 into a fresh group with byte-identical derived state', async () => {
    await appendMany('replay', 300, 17);
    const first = consumer('g-live', { batchSize: 25 });
    await first.start();
    await until(caughtUp('g-live'));
    await first.stop();
    const rebuilt = consumer('g-rebuilt', { batchSize: 500 });
    await rebuilt.start();
    await until(caughtUp('g-rebuilt'));
    const live = await derivedSnapshot(pool, 'g-live');
    expect(live.length).toBeGreaterThan(0);
    expect(await derivedSnapshot(pool, 'g-rebuilt')).toBe(live);
  });

  it('journals every committed batch: each event in exactly one, per partition in offset order, one seq per transaction', async () => {
    await appendMany('journal', 240, 30);
    const c = consumer('g-journal', { batchSize: 16, partitionsPerBatch: 3 });
    await c.start();
    await until(caughtUp('g-journal'));
    await c.stop();
    const { rows: batches } = await pool.query<{
      seq: string;
      partition: number;
      since: string;
      last: string;
    }>(
      `SELECT seq, partition, since_offset AS since, last_offset AS last FROM consumer_batch
        WHERE group_name = 'g-journal' ORDER BY seq, partition`,
    );
    const { rows: events } = await pool.query<{ partition: number; offset: string }>(
      'SELECT partition, "offset" FROM change_event ORDER BY partition, "offset"',
    );
    // Per partition, the ranges follow each other without gap or overlap, to the head.
    const next = new Map<number, number>();
    for (const b of batches) {
      expect(Number(b.since)).toBe(next.get(b.partition) ?? 0);
      expect(Number(b.last)).toBeGreaterThan(Number(b.since));
      next.set(b.partition, Number(b.last));
    }
    for (const e of events) expect(Number(e.offset)).toBeLessThanOrEqual(next.get(e.partition)!);
    const covering = (e: { partition: number; offset: string }) =>
      batches.filter(
        (b) =>
          b.partition === e.partition &&
          Number(e.offset) > Number(b.since) &&
          Number(e.offset) <= Number(b.last),
      ).length;
    expect(events.every((e) => covering(e) === 1)).toBe(true);
    // Several partitions in one transaction share its seq.
    const perSeq = new Map<string, number>();
    for (const b of batches) perSeq.set(b.seq, (perSeq.get(b.seq) ?? 0) + 1);
    expect(Math.max(...perSeq.values())).toBeGreaterThan(1);
  });

  it('resets a stopped group to the beginning, to an offset or to an event time, and refuses while it runs', async () => {
    await appendMany('reset', 50, 5);
    const c = consumer('g-reset');
    await c.start();
    await until(caughtUp('g-reset'));
    await expect(resetGroup(pool, 'g-reset', PARTITIONS, 'beginning')).rejects.toBeInstanceOf(GroupBusyError);
    await c.stop();

    const journaled = async () =>
      (await pool.query(`SELECT 1 FROM consumer_batch WHERE group_name = 'g-reset'`)).rowCount;
    expect(await journaled()).toBeGreaterThan(0);
    const zero = await resetGroup(pool, 'g-reset', PARTITIONS, 'beginning');
    expect(zero.every((p) => p.committedOffset === 0)).toBe(true);
    // What will be handled again is journaled again, not twice.
    expect(await journaled()).toBe(0);

    // Events with an event time at or after T are replayed, earlier ones are not.
    const t = new Date('2030-01-01T00:00:00Z');
    await log.append([
      change(conn, {
        externalId: 'late-1',
        eventKey: 'time:old',
        eventTime: new Date('2029-12-31T00:00:00Z'),
      }),
      change(conn, { externalId: 'late-1', eventKey: 'time:new', eventTime: t }),
    ]);
    const byTime = await resetGroup(pool, 'g-reset', PARTITIONS, { eventTime: t });
    const p = log.partitionOf(conn);
    const { rows } = await pool.query<{ offset: string }>(
      `SELECT "offset" FROM change_event WHERE event_key = 'time:new'`,
    );
    expect(byTime.find((x) => x.partition === p)!.committedOffset).toBe(Number(rows[0]!.offset) - 1);
    const lag = await groupLag(pool, 'g-reset');
    expect(lag.find((x) => x.partition === p)!.lag).toBe(1);
    const other = lag.filter((x) => x.partition !== p);
    expect(other.every((x) => x.lag === 0)).toBe(true);

    const toOffset = await resetGroup(pool, 'g-reset', PARTITIONS, { offset: 3 });
    expect(toOffset.every((x) => x.committedOffset === 3)).toBe(true);
  });

  it('retention deletes old events only once every group has consumed them', async () => {
    const r = await createTestDatabase('retention');
    const rpool = new Pool({ connectionString: r.url, max: 3 });
    try {
      const rlog = new ChangeLog(rpool, { partitions: 2 });
      await rlog.init();
      await createDerivedTables(rpool);
      const rconn = await seedConnection(rpool);
      const res = await rlog.append(
        Array.from({ length: 40 }, (_, i) => change(rconn, { externalId: `r-${i % 4}`, eventKey: `r:${i}` })),
      );
      if (!res.ok) throw new Error(res.error.message);
      await rlog.close();
      await rpool.query(`UPDATE change_event SET ingested_at = now() - interval '10 days'`);
      const fast = new LogConsumer({
        connection: r.url,
        group: 'fast',
        partitions: 2,
        handler: derivedStateHandler,
      });
      await fast.start();
      await fast.processAvailable();
      await fast.stop();
      // "slow" has joined but read nothing yet: it holds everything back.
      await resetGroup(rpool, 'slow', 2, 'beginning');
      const week = 7 * 24 * 3600_000;
      const held = await enforceRetention(rpool, { retentionMs: week });
      expect(held).toEqual({ deleted: 0, heldBackByGroups: 40 });
      const slow = new LogConsumer({
        connection: r.url,
        group: 'slow',
        partitions: 2,
        handler: derivedStateHandler,
      });
      await slow.start();
      await slow.processAvailable();
      await slow.stop();
      const journal = async () => (await rpool.query('SELECT 1 FROM consumer_batch')).rowCount;
      expect(await journal()).toBeGreaterThan(0);
      const done = await enforceRetention(rpool, { retentionMs: week, chunk: 7 });
      expect(done).toEqual({ deleted: 40, heldBackByGroups: 0 });
      // The journal goes with the events it ordered.
      expect(await journal()).toBe(0);
      // Young events stay whatever the groups did.
      expect(await enforceRetention(rpool, { retentionMs: 30 * 24 * 3600_000 })).toEqual({
        deleted: 0,
        heldBackByGroups: 0,
      });
    } finally {
      await rpool.end();
      await r.drop();
    }
  });
});
