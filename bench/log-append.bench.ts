import { randomUUID } from 'node:crypto';
import { ChangeLog } from '@syncline/log';
import { Pool } from 'pg';
import { type SeededConnection, seedConnection } from '../test/support/fixtures';
import { emit, freshBenchDatabase, log } from './support';

/**
 * 1,000,000 changes appended by 8 concurrent producers in batches of 100 (as webhook
 * batches arrive) through the micro-batcher, against the naive baseline in the same run:
 * one change per INSERT and commit, same producers, same statement. The changes belong to
 * `--workspaces` workspaces (default 64; each record to one of them): a workspace's changes
 * all go to one partition, so with one workspace every append waits on one partition head.
 */
export async function run(
  args: { total?: number; baseline?: number; workspaces?: number } = {},
): Promise<void> {
  const total = args.total ?? 1_000_000;
  const baselineTotal = args.baseline ?? 20_000;
  const producers = 8;
  const batch = 100;
  const url = await freshBenchDatabase('syncline_bench_log_append');
  const pool = new Pool({ connectionString: url, max: 10 });
  const conns = await Promise.all(
    Array.from({ length: args.workspaces ?? 64 }, (_, w) => seedConnection(pool, `bench-${w}`)),
  );

  const body = (i: number) => ({
    ...workspaceOf(conns, i % 50_000),
    entityType: 'person',
    externalId: `contact-${i % 50_000}`,
    op: 'upsert',
    eventKey: `evt-${i}-${randomUUID()}`,
    eventTime: new Date(1_790_000_000_000 + i),
    fields: {
      email: `person${i % 50_000}@example.com`,
      firstname: 'Ada',
      lastname: `Lovelace ${i}`,
      lifecyclestage: 'lead',
    },
    fieldTimes: { lifecyclestage: new Date(1_790_000_000_000 + i) },
    origin: { changeSource: 'CRM_UI' },
  });

  async function drive(changeLog: ChangeLog, count: number, perCall: number): Promise<number> {
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: producers }, async () => {
        for (;;) {
          const from = next;
          if (from >= count) return;
          next += perCall;
          const changes = Array.from({ length: Math.min(perCall, count - from) }, (_, k) => body(from + k));
          const res = await changeLog.append(changes);
          if (!res.ok) throw new Error(res.error.message);
        }
      }),
    );
    await changeLog.drain();
    return count / (Number(process.hrtime.bigint() - started) / 1e9);
  }

  const batched = new ChangeLog(pool, { partitions: 16 });
  await batched.init();
  log(`log-append: ${total} changes, ${producers} producers × ${batch} per call`);
  const eventsPerS = await drive(batched, total, batch);

  // Baseline: every change its own statement and commit (the micro-batcher off).
  const naive = new ChangeLog(pool, { partitions: 16, maxBatchRows: 1, flushMs: 0, lanes: producers });
  log(`log-append baseline: ${baselineTotal} changes, one INSERT and commit each`);
  const baselinePerS = await drive(naive, baselineTotal, 1);

  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM change_event');
  if (rows[0]!.n !== total + baselineTotal)
    throw new Error(`expected ${total + baselineTotal} rows, found ${rows[0]!.n}`);
  await pool.end();
  emit({
    bench: 'log-append',
    events: total,
    events_per_s: Math.round(eventsPerS),
    baseline_events: baselineTotal,
    baseline_events_per_s: Math.round(baselinePerS),
    ratio: Number((eventsPerS / baselinePerS).toFixed(1)),
    workspaces: conns.length,
  });
}

/** The workspace and connection of record `record`: the same for all its changes. */
export function workspaceOf(conns: readonly SeededConnection[], record: number) {
  const conn = conns[record % conns.length]!;
  return { workspaceId: conn.workspaceId, connectionId: conn.connectionId };
}
