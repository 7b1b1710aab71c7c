import { randomUUID } from 'node:crypto';
import { ChangeLog, groupLag, LogConsumer, type LogHandler } from '@syncline/log';
import { Pool } from 'pg';
import { seedConnection } from '../test/support/fixtures';
import { workspaceOf } from './log-append.bench';
import { emit, freshBenchDatabase, log } from './support';

/**
 * A group of 4 consumers drains a pre-filled log with a trivial handler that writes one
 * row of derived state per event, in the transaction that commits the offset. The changes
 * belong to `--workspaces` workspaces (default 64): a workspace's changes are all on one
 * partition, which one member folds at a time.
 */
export async function run(
  args: { total?: number; consumers?: number; batch?: number; workspaces?: number } = {},
): Promise<void> {
  const total = args.total ?? 300_000;
  const members = args.consumers ?? 4;
  const batchSize = args.batch ?? 1000;
  const url = await freshBenchDatabase('syncline_bench_log_consume');
  const pool = new Pool({ connectionString: url, max: 6 });
  const conns = await Promise.all(
    Array.from({ length: args.workspaces ?? 64 }, (_, w) => seedConnection(pool, `bench-${w}`)),
  );
  await pool.query(`CREATE TABLE derived (partition int, "offset" bigint, external_id text, stage text,
                    PRIMARY KEY (partition, "offset"))`);

  log(`log-consume: filling the log with ${total} changes`);
  const changeLog = new ChangeLog(pool, { partitions: 16 });
  await changeLog.init();
  for (let from = 0; from < total; from += 5000) {
    const res = await changeLog.append(
      Array.from({ length: Math.min(5000, total - from) }, (_, k) => ({
        ...workspaceOf(conns, (from + k) % 20_000),
        entityType: 'deal',
        externalId: `deal-${(from + k) % 20_000}`,
        op: 'upsert',
        eventKey: `e-${from + k}-${randomUUID()}`,
        eventTime: new Date(1_790_000_000_000 + from + k),
        fields: { dealstage: `stage-${(from + k) % 7}`, amount: from + k },
      })),
    );
    if (!res.ok) throw new Error(res.error.message);
  }
  await changeLog.close();

  const handler: LogHandler = async (tx, events) => {
    await tx.query(
      `INSERT INTO derived (partition, "offset", external_id, stage)
       SELECT * FROM unnest($1::int[], $2::bigint[], $3::text[], $4::text[])`,
      [
        events.map((e) => e.partition),
        events.map((e) => e.offset),
        events.map((e) => e.externalId),
        events.map((e) => String(e.fields.dealstage)),
      ],
    );
  };

  log(`log-consume: ${members} consumers, batches of ${batchSize}`);
  const started = process.hrtime.bigint();
  const group = Array.from(
    { length: members },
    () =>
      new LogConsumer({
        connection: url,
        group: 'bench',
        partitions: 16,
        handler,
        batchSize,
        rebalanceMs: 200,
        pollMs: 50,
      }),
  );
  await Promise.all(group.map((c) => c.start()));
  for (;;) {
    const lag = (await groupLag(pool, 'bench')).reduce((s, p) => s + p.lag, 0);
    if (lag === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(group.map((c) => c.stop()));
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM derived');
  if (rows[0]!.n !== total) throw new Error(`expected ${total} derived rows, found ${rows[0]!.n}`);
  await pool.end();
  emit({
    bench: 'log-consume',
    events: total,
    consumers: members,
    events_per_s: Math.round(total / seconds),
    workspaces: conns.length,
  });
}
