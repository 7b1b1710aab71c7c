import { randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { createLogger } from '@syncline/core';
import { IdentityService } from '@syncline/identity';
import { ChangeLog, LogConsumer } from '@syncline/log';
import { SyncStage } from '@syncline/sync-stage';
import { Client, Pool } from 'pg';
import type { WorkersConfig } from '../apps/workers/src/config/workers-config';
import { TableStatisticsService } from '../apps/workers/src/maintenance/table-statistics.service';
import { applyReplay } from '../apps/workers/src/replay/replay-rebuild';
import { SYNC_GROUP } from '../apps/workers/src/sync/sync-group';
import { cpuBetween, cpuSeconds } from './cpu-accounting';
import { emit, freshBenchDatabase, log } from './support';

/**
 * replay: a workspace of `records` source records (half of them HubSpot contacts in CRM A,
 * half the same people in CRM B, so each person is one entity of two records) rebuilt from
 * `events` events on the log from offset zero by today's replay (`applyReplay` from the
 * beginning), and the rebuilt state compared table by table with the live one.
 *
 * The live state is made the fastest honest way: the events go on the log with the log's
 * bulk append, then the real sync stage (LogConsumer + SyncHandler, as the workers run it:
 * batches of SYNC_BATCH_SIZE (`--batch`) from the workspace's partition of 16) folds
 * them once. That fold's events/s is the baseline the replay is compared with. The workers'
 * planner-statistics upkeep (TableStatisticsService, every TABLE_STATS_INTERVAL_MS = 10 s) runs
 * beside the fold as it does in the workers, and once more before the replay: on tables never
 * analyzed the identity stage's match-key lookup reads every key of the workspace per batch
 * (measured: 25 ms a lookup at 5,000 people), so without it both folds slow as the workspace grows.
 *
 * No push runs: every write the stage owes stays pending in the outbox, so the rebuild must
 * owe the same. Where the replay's time goes is read from its own progress calls: before the
 * first (scope, what stood before, clearing), between the first and the last (feeding the
 * batches through the stage), after the last (restoring what the log lacks, owing the final
 * values, the report, the commit).
 */
export async function run(args: Record<string, number>): Promise<void> {
  const events = args.events ?? 1_000_000;
  const records = args.records ?? 100_000;
  const batchSize = args.batch ?? 200;
  // The replay's own batches: a fold's outcome does not depend on where its batches end (the
  // Kappa property), so it need not take the live stage's size.
  const replayBatch = args.replayBatch ?? batchSize;
  const partitions = 16;
  if (records % 2 !== 0 || events < records) throw new Error('--records must be even and at most --events');
  const url = await freshBenchDatabase('syncline_bench_replay');
  const pool = new Pool({ connectionString: url, max: 4 });
  try {
    const ws = await seedWorkspace(pool);

    log(`replay: appending ${events} events of ${records} records`);
    const appendSeconds = await timed(() => appendEvents(pool, ws, events, records, partitions));

    log('replay: the live sync stage folds them once (baseline)');
    const liveCpu = cpuSeconds({});
    const statistics = new TableStatisticsService(
      pool,
      { TABLE_STATS_INTERVAL_MS: 10_000 } as WorkersConfig,
      createLogger({ level: 'warn' }),
    );
    statistics.onApplicationBootstrap();
    const liveSeconds = await timed(() => foldLive(url, partitions, batchSize));
    await statistics.onApplicationShutdown();
    const liveCpuUsed = cpuBetween(liveCpu, cpuSeconds({}));
    await statistics.upkeep();

    const tables = await snapshot(pool, ws.workspaceId);
    log(`replay: live state ${JSON.stringify(await sizes(pool, tables))}; rebuilding`);

    const statements = timeStatements();
    const phases: number[] = [];
    const started = performance.now();
    const replayCpu = cpuSeconds({});
    let lastProgress = started;
    const report = await applyReplay(pool, ws.workspaceId, 'beginning', {
      batchSize: replayBatch,
      onProgress: async (replayed, total) => {
        const now = performance.now();
        if (replayed === 0) phases.push(now - started);
        if (replayed === total) phases.push(now - started);
        if (now - lastProgress > 10_000) {
          lastProgress = now;
          log(
            `replay: ${replayed}/${total} events, ${Math.round(replayed / ((now - phases[0]! - started) / 1000))}/s while feeding`,
          );
        }
      },
    });
    const replaySeconds = (performance.now() - started) / 1000;
    const replayCpuUsed = cpuBetween(replayCpu, cpuSeconds({}));
    const sql = statements.stop();
    log(
      `replay: statements by time (s, calls):\n${sql.top.map((t) => `  ${t.seconds.toFixed(1)} ${t.calls} ${t.sql}`).join('\n')}`,
    );
    const [prepared = 0, fed = prepared] = phases;

    const differences = await compare(pool, ws.workspaceId, tables);
    const equal = Object.values(differences).every((n) => n === 0);
    emit({
      bench: 'replay',
      events: report.scope.events,
      records,
      entities: report.scope.entities,
      events_per_s: Math.round(report.scope.events / replaySeconds),
      equal,
      replay_batch: replayBatch,
      differences,
      summary: report.summary,
      seconds: Number(replaySeconds.toFixed(1)),
      phases_s: {
        prepare: Number((prepared / 1000).toFixed(1)),
        feed: Number(((fed - prepared) / 1000).toFixed(1)),
        finish: Number((replaySeconds - fed / 1000).toFixed(1)),
      },
      // Time in awaited statements (the replay runs one at a time): the rest is the process's own work.
      sql_s: Number(sql.seconds.toFixed(1)),
      cpu_s: replayCpuUsed,
      baseline_live_events_per_s: Math.round(events / liveSeconds),
      baseline_live_seconds: Number(liveSeconds.toFixed(1)),
      baseline_live_cpu_s: liveCpuUsed,
      append_events_per_s: Math.round(events / appendSeconds),
      target_events_per_s: 20_000,
    });
  } finally {
    await pool.end();
  }
}

/** A workspace with two live HubSpot connections, A and B. */
async function seedWorkspace(pool: Pool): Promise<{ workspaceId: string; a: string; b: string }> {
  const [workspaceId, a, b] = [randomUUID(), randomUUID(), randomUUID()];
  await pool.query(`INSERT INTO workspace (id, name) VALUES ($1, 'replay bench')`, [workspaceId]);
  await pool.query(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES ($2, $1, 'hubspot', 'portal-a', 'live'), ($3, $1, 'hubspot', 'portal-b', 'live')`,
    [workspaceId, a, b],
  );
  return { workspaceId, a, b };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/**
 * Record r is contact `a-r` in A for r < records/2, else `b-…` in B for the same person.
 * Event i edits record i mod records, so each batch holds many records and every record is
 * edited events/records times; A and B edit each person's job title and, every third edit,
 * phone, at times one millisecond apart (the last writer wins by default).
 */
async function appendEvents(
  pool: Pool,
  ws: { workspaceId: string; a: string; b: string },
  events: number,
  records: number,
  partitions: number,
): Promise<void> {
  const changeLog = new ChangeLog(pool, { partitions });
  await changeLog.init();
  const people = records / 2;
  const t0 = Date.now() - events - 3_600_000;
  const chunk = 5_000;
  try {
    for (let from = 0; from < events; from += chunk) {
      const changes = Array.from({ length: Math.min(chunk, events - from) }, (_, k) => {
        const i = from + k;
        const record = i % records;
        const person = record % people;
        const inA = record < people;
        const edit = Math.floor(i / records);
        const externalId = `${inA ? 'a' : 'b'}-${person}`;
        return {
          workspaceId: ws.workspaceId,
          connectionId: inA ? ws.a : ws.b,
          entityType: 'person',
          externalId,
          op: 'upsert',
          eventKey: `contacts:${externalId}:${i}`,
          eventTime: new Date(t0 + i),
          fields: {
            email: `p${person}@replay.example`,
            firstName: `P${person}`,
            lastName: 'Replay',
            jobTitle: `${inA ? 'A' : 'B'} title ${edit}`,
            ...(edit % 3 === 0 ? { phone: `+1 555 ${inA ? 1 : 2}${edit}` } : {}),
          },
          fieldTimes: {},
        };
      });
      const appended = await changeLog.append(changes);
      if (!appended.ok) throw new Error(appended.error.message);
    }
  } finally {
    await changeLog.close();
  }
}

/** The workers' sync consumer (SyncConsumerService) without the pushes and pulls it would enqueue. */
async function foldLive(url: string, partitions: number, batchSize: number): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 2 });
  const engine = new MergeEngine(new PgMergeStore(pool), { cacheBytes: 128 * 1024 * 1024 });
  const stage = new SyncStage({ identity: new IdentityService(), engine });
  const consumer = new LogConsumer({
    group: SYNC_GROUP,
    partitions,
    connection: url,
    batchSize,
    partitionsPerBatch: 16,
    handler: async (tx, batch) => {
      await stage.handle(tx, batch);
    },
  });
  await consumer.start();
  try {
    await consumer.processAvailable();
  } finally {
    await consumer.stop();
    engine.forget();
    await pool.end();
  }
}

/**
 * The derived tables the sync stage writes, by the columns whose content is deterministic:
 * times stamped by now(), the entity's version (a rebuild moves it above every cached one on
 * purpose) and the outbox's serial id and attempt bookkeeping are left out.
 */
const DERIVED: Record<string, string> = {
  entity: `SELECT id, entity_type, display_name, match_keys, merged_into, fields, provenance, heads, flags
             FROM entity WHERE workspace_id = $1`,
  entity_doc: `SELECT d.entity_id, md5(d.doc) AS doc, d.doc_bytes FROM entity_doc d WHERE d.workspace_id = $1`,
  entity_synced_heads: `SELECT s.entity_id, s.connection_id, s.heads, s.stale FROM entity_synced_heads s
                          JOIN entity e ON e.id = s.entity_id WHERE e.workspace_id = $1`,
  source_link: `SELECT connection_id, entity_type, external_id, entity_id, provider_version, link_reason
                  FROM source_link WHERE workspace_id = $1`,
  match_key: 'SELECT entity_type, kind, value, entity_id FROM match_key WHERE workspace_id = $1',
  possible_duplicate: `SELECT id, entity_type, entity_a, entity_b, score, evidence, status::text AS status
                         FROM possible_duplicate WHERE workspace_id = $1`,
  merge_conflict: `SELECT id, entity_id, field, kind, policy, candidates, status::text AS status, resolution
                     FROM merge_conflict WHERE workspace_id = $1`,
  outbox: `SELECT entity_id, entity_type, connection_id, op, external_id, fields, prior, heads, idempotency_key, status
             FROM outbox WHERE workspace_id = $1 AND status <> 'superseded'`,
  write_receipt: `SELECT connection_id, idempotency_key, entity_id, external_id, fields, heads
                    FROM write_receipt WHERE workspace_id = $1`,
};

/** Copies the live state's deterministic content aside (tables bench_live_<name>); returns the names. */
async function snapshot(pool: Pool, workspaceId: string): Promise<string[]> {
  for (const [table, select] of Object.entries(DERIVED)) {
    await pool.query(`DROP TABLE IF EXISTS bench_live_${table}`);
    await pool.query(`CREATE TABLE bench_live_${table} AS ${select}`, [workspaceId]);
  }
  return Object.keys(DERIVED);
}

async function sizes(pool: Pool, tables: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM bench_live_${table}`);
    out[table] = rows[0]?.n ?? 0;
  }
  return out;
}

/** Rows in either state and not the other (as multisets), per table. */
async function compare(
  pool: Pool,
  workspaceId: string,
  tables: readonly string[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const select = DERIVED[table]!;
    const { rows } = await pool.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM (${select} EXCEPT ALL SELECT * FROM bench_live_${table}) x)::int
            + (SELECT count(*) FROM (SELECT * FROM bench_live_${table} EXCEPT ALL ${select}) y)::int AS n`,
      [workspaceId],
    );
    out[table] = rows[0]?.n ?? 0;
  }
  return out;
}

/**
 * Times every statement a pg Client sends until `stop()`, by its text (whitespace collapsed,
 * first 90 characters): the replay awaits one statement at a time, so their sum is the
 * replay's time in PostgreSQL and round trips. Bench-side only: the code measured is unchanged.
 */
function timeStatements(): {
  stop(): { seconds: number; top: { sql: string; seconds: number; calls: number }[] };
} {
  const original = Client.prototype.query;
  const spent = new Map<string, { ms: number; calls: number }>();
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes them all through.
  (Client.prototype as any).query = function timed(this: Client, ...args: any[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (!(result instanceof Promise)) return result;
    const text = typeof args[0] === 'string' ? args[0] : String(args[0]?.text ?? '?');
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    const started = performance.now();
    const done = () => {
      const entry = spent.get(key) ?? { ms: 0, calls: 0 };
      entry.ms += performance.now() - started;
      entry.calls++;
      spent.set(key, entry);
    };
    result.then(done, done);
    return result;
  };
  return {
    stop: () => {
      Client.prototype.query = original;
      const all = [...spent].map(([sql, e]) => ({ sql, seconds: e.ms / 1000, calls: e.calls }));
      all.sort((a, b) => b.seconds - a.seconds);
      return { seconds: all.reduce((t, e) => t + e.seconds, 0), top: all.slice(0, 15) };
    },
  };
}
