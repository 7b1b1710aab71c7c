import { isDeepStrictEqual } from 'node:util';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { entityIdFor, IdentityService } from '@syncline/identity';
import { LogConsumer, type LogEvent, StagingChangeLog } from '@syncline/log';
import { queueReconcileCreates, SyncStage as SyncHandler } from '@syncline/sync-stage';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceRows } from '../../../sync-api/src/openapi/testing/two-workspaces';
import { ProviderAccounts } from '../../../sync-api/src/testing/provider-accounts';
import {
  bearer,
  createApiKey,
  seedWorkspace,
  startTestApp,
  type TestApp,
} from '../../../sync-api/src/testing/test-app';
import { storeDryRunReport } from './dry-run.service';
import { computeDryRunReport, type DryRunReport } from './dry-run-report';

/**
 * The dry run of a new connection against the real sync stage on a real database: CRM A is
 * live with three people; CRM B is connected in dry run with two of them (one adding a
 * field, one editing a field A has under a manual policy) and two people A lacks. The report
 * is computed through the API; then the connection is enabled, the workers' sync stage runs
 * over the log, and what it actually did (links, entity changes, conflicts, outbox rows) must
 * be what the report said, while nothing at all was written before the enable. The report
 * itself is the workers' `connection.dry-run` job, run here by a BullMQ worker of its own.
 */

const T0 = new Date('2026-11-20T10:00:00.000Z');
const T1 = new Date('2026-11-21T10:00:00.000Z');

const person = (
  workspaceId: string,
  connectionId: string,
  externalId: string,
  at: Date,
  fields: Record<string, unknown>,
) => ({
  workspaceId,
  connectionId,
  entityType: 'person',
  externalId,
  op: 'upsert',
  eventKey: `contacts:${externalId}:${at.getTime()}`,
  eventTime: at,
  fields,
});

describe('dry run of a new connection', () => {
  let t: TestApp;
  let pool: Pool;
  let log: StagingChangeLog;
  let ws: { workspaceId: string; adminKey: string };
  let other: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let crmA: string;
  let crmB: string;
  let crmC: string;
  // The workers' sync stage, as a running worker has it.
  const engine = () => new MergeEngine(new PgMergeStore(pool));
  let workers: SyncHandler;
  let dryRunWorker: Worker;
  let workerRedis: Redis;
  let dryRunJobs = 0;

  const api = (method: 'GET' | 'POST', url: string, key = ws.adminKey, payload?: object) =>
    t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
  /**
   * The report as a page reads it: asked again while the workers compute it (202, after
   * Retry-After) or a newer one (200 `stale`), which a loaded machine may take over 2 s for.
   */
  const reportOf = async (url: string) => {
    for (let tries = 0; ; tries++) {
      const res = await api('GET', url);
      const waiting =
        res.statusCode === 202 || (res.statusCode === 200 && res.json<{ stale: boolean }>().stale);
      if (!waiting || tries > 30) return res;
      if (res.statusCode === 202) expect(res.headers['retry-after']).toBe('2');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const rows = async <R extends object>(sql: string, params: unknown[] = []) =>
    (await pool.query<R>(sql, params)).rows;

  /** What the sync consumer group does in the workers: every partition to its head. */
  const runSyncStage = async () => {
    const consumer = new LogConsumer({
      group: 'sync',
      partitions: t.config.LOG_PARTITIONS,
      connection: t.db.url,
      handler: async (tx, events: LogEvent[]) => {
        await workers.handle(tx, events);
      },
    });
    await consumer.start();
    try {
      await consumer.processAvailable();
    } finally {
      await consumer.stop();
    }
  };

  let accounts: ProviderAccounts;
  const connect = async (displayName: string, dryRun?: boolean) => {
    // A portal of its own in the emulator, whose token proves it.
    const portal = await accounts.hubspot();
    const res = await api('POST', '/api/v1/connections', ws.adminKey, {
      provider: 'hubspot',
      externalAccountId: portal.externalAccountId,
      displayName,
      credentials: { privateAppToken: portal.privateAppToken },
      ...(dryRun === undefined ? {} : { dryRun }),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string; dryRun: boolean }>();
  };

  /**
   * Everything the dry run could have touched: the workspace's rows (but its keys, whose last
   * use every request notes), and the log's and documents' tables.
   */
  const world = async () => ({
    // The stored report is the dry run's one output.
    workspace: {
      ...(await workspaceRows(t.prisma, ws.workspaceId)),
      api_key: [],
      dry_run_report: [],
    } as Record<string, string[]>,
    docChanges: await rows('SELECT entity_id, seq, md5(chunk) FROM entity_doc_change ORDER BY 1, 2'),
    syncedHeads: await rows(
      'SELECT entity_id, connection_id, heads, stale FROM entity_synced_heads ORDER BY 1, 2',
    ),
    log: await rows('SELECT partition, "offset", event_key FROM change_event ORDER BY 1, 2'),
    heads: await rows('SELECT partition, next_offset FROM log_partition ORDER BY 1'),
    offsets: await rows('SELECT group_name, partition, committed_offset FROM consumer_offset ORDER BY 1, 2'),
    outboxSequence: await rows('SELECT last_value, is_called FROM outbox_id_seq'),
  });

  beforeAll(async () => {
    accounts = await ProviderAccounts.start();
    t = await startTestApp('dry_run', accounts.env);
    pool = new Pool({ connectionString: t.db.url, max: 4 });
    log = t.app.get(StagingChangeLog);
    ws = await seedWorkspace(t.prisma, 'Acme');
    other = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, ws.adminKey, 'sales', 'Dana');
    workers = new SyncHandler({ identity: new IdentityService(), engine: engine(), connectionsTtlMs: 0 });
    workerRedis = new Redis(t.config.REDIS_URL, { maxRetriesPerRequest: null });
    dryRunWorker = new Worker(
      'dry-run',
      (job) => {
        dryRunJobs++;
        return storeDryRunReport(pool, job.data.connectionId, { partitions: t.config.LOG_PARTITIONS });
      },
      { connection: workerRedis, prefix: t.config.REDIS_PREFIX },
    );

    // CRM A, live: its backfill is on the log and merged, and creates may go to it.
    crmA = (await connect('CRM A')).id;
    await pool.query(
      `UPDATE connection SET status = 'live', cursors = '{"live":{}}', reconciled_at = now() WHERE id = $1`,
      [crmA],
    );
    await pool.query(
      `INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
      VALUES ($1, 'person', '{"jobTitle": {"kind": "manual"}}', 1)`,
      [ws.workspaceId],
    );
    const appended = await log.append([
      person(ws.workspaceId, crmA, 'a-ada', T0, {
        email: 'ada.lovelace@analytical.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+44 20 7946 0018',
        jobTitle: 'Analyst',
      }),
      person(ws.workspaceId, crmA, 'a-alan', T0, {
        email: 'alan@bletchley.example',
        firstName: 'Alan',
        lastName: 'Turing',
        jobTitle: 'Cryptanalyst',
      }),
      person(ws.workspaceId, crmA, 'a-grace', T0, {
        email: 'grace@navy.example',
        firstName: 'Grace',
        lastName: 'Hopper',
      }),
    ]);
    expect(appended.ok).toBe(true);
    await runSyncStage();
  });

  afterAll(async () => {
    await dryRunWorker?.close();
    workerRedis?.disconnect();
    await pool?.end();
    await t?.close();
    await accounts?.close();
  });

  const ada = () => entityIdFor(ws.workspaceId, crmA, 'person', 'a-ada');
  const alan = () => entityIdFor(ws.workspaceId, crmA, 'person', 'a-alan');
  const grace = () => entityIdFor(ws.workspaceId, crmA, 'person', 'a-grace');
  const pendingC = () => ({
    connectionId: crmC,
    provider: 'hubspot',
    displayName: 'CRM C',
    status: 'pending',
    reconciled: false,
  });
  const katherine = () => entityIdFor(ws.workspaceId, crmB, 'person', 'b-katherine');
  const linus = () => entityIdFor(ws.workspaceId, crmB, 'person', 'b-linus');

  it('connects CRM B in dry run (audited as such); a connection is not in dry run by default', async () => {
    const created = await connect('CRM B', true);
    expect(created.dryRun).toBe(true);
    crmB = created.id;
    const c = await connect('CRM C');
    expect(c.dryRun).toBe(false);
    crmC = c.id;
    const audit = await rows<{ details: Record<string, unknown> }>(
      `SELECT details FROM audit_log WHERE action = 'connection.created' AND target_id = $1`,
      [crmB],
    );
    expect(audit).toEqual([{ details: expect.objectContaining({ dryRun: true }) }]);
    const listed = await api('GET', '/api/v1/connections');
    expect(
      listed.json<{ data: { id: string; dryRun: boolean }[] }>().data.find((c) => c.id === crmB)?.dryRun,
    ).toBe(true);
  });

  it("stages B's backfill (as its pulls do) instead of putting it on the log", async () => {
    await pool.query(
      `UPDATE connection SET status = 'backfilling', cursors = '{"backfill":{"after":"2"}}', backfill_seen = 2,
              backfill_total = 4 WHERE id = $1`,
      [crmB],
    );
    const first = await log.append([
      person(ws.workspaceId, crmB, 'b-ada', T1, {
        email: 'ada.lovelace@analytical.example',
        firstName: 'Ada',
        lastName: 'Lovelace',
        company: 'Analytical Engines',
      }),
      person(ws.workspaceId, crmB, 'b-alan', T1, {
        email: 'alan@bletchley.example',
        firstName: 'Alan',
        lastName: 'Turing',
        jobTitle: 'Mathematician',
      }),
    ]);
    expect(first.ok && first.value.every((r) => r.isNew && r.offset === null)).toBe(true);
    expect(await rows('SELECT 1 FROM change_event WHERE connection_id = $1', [crmB])).toEqual([]);
    expect(
      await rows('SELECT event_key FROM staged_change WHERE connection_id = $1 ORDER BY id', [crmB]),
    ).toEqual([
      { event_key: `contacts:b-ada:${T1.getTime()}` },
      { event_key: `contacts:b-alan:${T1.getTime()}` },
    ]);
  });

  it('answers 202 while the first report is being computed, naming the connection and its backfill', async () => {
    // No worker takes the job: the request waits its 2 s, then says the report is on its way.
    await dryRunWorker.pause();
    try {
      const res = await api('GET', `/api/v1/connections/${crmB}/dry-run`);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.json()).toEqual({
        computing: true,
        connectionId: crmB,
        provider: 'hubspot',
        externalAccountId: expect.any(String),
        displayName: 'CRM B',
        backfill: { seen: 2, estimatedTotal: 4 },
        retryAfterSeconds: 2,
        lastFailure: null,
      });
    } finally {
      dryRunWorker.resume();
    }
    // The job waited in the queue: once a worker takes it, the report is served.
    expect((await reportOf(`/api/v1/connections/${crmB}/dry-run`)).statusCode).toBe(200);
  });

  it('reports while backfilling, partial and saying so: no creates in B itself yet', async () => {
    const res = await reportOf(`/api/v1/connections/${crmB}/dry-run`);
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json<DryRunReport>();
    expect(report).toMatchObject({
      connectionId: crmB,
      status: 'backfilling',
      complete: false,
      backfill: { seen: 2, estimatedTotal: 4 },
      staged: { changes: 2, records: 2 },
    });
    expect(report.links.map((l) => [l.externalId, l.entityId])).toEqual([
      ['b-ada', ada()],
      ['b-alan', alan()],
    ]);
    const self = report.writes.find((w) => w.self);
    expect(self?.counts.create).toBeUndefined();
  });

  let before: Awaited<ReturnType<typeof world>>;
  let report: DryRunReport;

  it('reports, once the backfill is done, every link, creation, field change, conflict and write', async () => {
    expect(
      (
        await log.append([
          person(ws.workspaceId, crmB, 'b-katherine', T1, {
            email: 'katherine@nasa.example',
            firstName: 'Katherine',
            lastName: 'Johnson',
          }),
          person(ws.workspaceId, crmB, 'b-linus', T1, {
            email: 'linus@kernel.example',
            firstName: 'Linus',
            lastName: 'Torvalds',
            jobTitle: null,
          }),
          // Then edited in B, one property notification per edit (more than 9: staged order is numeric).
          ...[
            'Draft 1',
            'Draft 2',
            'Draft 3',
            'Draft 4',
            'Draft 5',
            'Draft 6',
            'Draft 7',
            'Draft 8',
            'Draft 9',
            'Draft 10',
            'Maintainer',
          ].map((jobTitle, i) => ({
            ...person(ws.workspaceId, crmB, 'b-linus', new Date(T1.getTime() + 100 * (i + 1)), { jobTitle }),
            eventKey: `contacts:b-linus:jobtitle:${i + 1}`,
            fieldTimes: { jobTitle: new Date(T1.getTime() + 100 * (i + 1)).toISOString() },
            origin: { changeSource: 'CRM_UI', partial: true },
          })),
        ])
      ).ok,
    ).toBe(true);
    await pool.query(
      `UPDATE connection SET status = 'live', cursors = '{"live":{}}', backfill_seen = 4 WHERE id = $1`,
      [crmB],
    );
    before = await world();
    const res = await reportOf(`/api/v1/connections/${crmB}/dry-run`);
    expect(res.statusCode, res.body).toBe(200);
    report = res.json<DryRunReport>();

    expect(report).toMatchObject({ complete: true, status: 'live', staged: { changes: 15, records: 4 } });
    expect(report.failures).toEqual([]);
    expect(report.links.map((l) => [l.externalId, l.entityId, l.displayName])).toEqual([
      ['b-ada', ada(), 'Ada Lovelace'],
      ['b-alan', alan(), 'Alan Turing'],
    ]);
    expect(report.creations.map((c) => [c.entityId, c.externalIds, c.fields]).sort()).toEqual(
      [
        [
          katherine(),
          ['b-katherine'],
          { email: 'katherine@nasa.example', firstName: 'Katherine', lastName: 'Johnson' },
        ],
        [
          linus(),
          ['b-linus'],
          { email: 'linus@kernel.example', firstName: 'Linus', lastName: 'Torvalds', jobTitle: 'Maintainer' },
        ],
      ].sort(),
    );
    const adaChange = report.changes.find((c) => c.entityId === ada());
    expect(adaChange?.fields.company).toEqual({
      from: null,
      to: 'Analytical Engines',
      source: { kind: 'connection', id: crmB },
    });
    expect(report.changes.map((c) => c.entityId)).not.toContain(grace());
    const jobTitle = report.conflicts.find((c) => c.entityId === alan() && c.field === 'jobTitle');
    expect(jobTitle).toMatchObject({ policy: 'manual', status: 'open', entityType: 'person' });
    expect(jobTitle?.candidates.map((c) => c.value).sort()).toEqual(['Cryptanalyst', 'Mathematician']);

    const toA = report.writes.find((w) => w.connectionId === crmA);
    expect(toA).toMatchObject({ self: false, provider: 'hubspot', displayName: 'CRM A' });
    expect(toA?.counts.create).toBe(2);
    expect(
      toA?.sample
        .filter((w) => w.op === 'create')
        .map((w) => w.entityId)
        .sort(),
    ).toEqual([katherine(), linus()].sort());
    expect(toA?.sample.find((w) => w.op === 'update' && w.entityId === ada())?.fields).toMatchObject({
      company: 'Analytical Engines',
    });
    const toB = report.writes.find((w) => w.connectionId === crmB);
    expect(toB).toMatchObject({ self: true });
    // Grace, whom B lacks, is created in B once its backfill is linked.
    expect(toB?.sample.filter((w) => w.op === 'create').map((w) => w.entityId)).toEqual([grace()]);
    expect(toB?.sample.find((w) => w.op === 'update' && w.entityId === ada())?.fields).toMatchObject({
      phone: '+44 20 7946 0018',
      jobTitle: 'Analyst',
    });
    // A is live and reconciled: its part is counted. C, connected and never synced, is named.
    expect(report.waitingTargets).toEqual([pendingC()]);
    expect(report.summary).toMatchObject({ links: 2, creations: 2, failures: 0 });
    expect(report.summary.writes).toBe(report.writes.reduce((n, w) => n + w.total, 0));
  });

  it('wrote nothing anywhere: every row, the log, the offsets and the outbox sequence are as they were', async () => {
    expect(await world()).toEqual(before);
  });

  it('serves the stored report until the backfill moves on; a refresh computes it again', async () => {
    const jobs = dryRunJobs;
    const again = await reportOf(`/api/v1/connections/${crmB}/dry-run`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json<DryRunReport & { stale: boolean }>()).toMatchObject({
      computedAt: report.computedAt,
      stale: false,
      summary: report.summary,
    });
    expect(dryRunJobs).toBe(jobs);
    const stored = await rows<{ staged_up_to: string; complete: boolean }>(
      'SELECT staged_up_to::text, complete FROM dry_run_report WHERE connection_id = $1',
      [crmB],
    );
    const [last] = await rows<{ id: string }>(
      'SELECT max(id)::text AS id FROM staged_change WHERE connection_id = $1',
      [crmB],
    );
    expect(stored).toEqual([{ staged_up_to: last?.id, complete: true }]);

    const refreshed = await reportOf(`/api/v1/connections/${crmB}/dry-run?refresh=true`);
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const fresh = refreshed.json<DryRunReport & { stale: boolean }>();
    expect(dryRunJobs).toBe(jobs + 1);
    expect(fresh.stale).toBe(false);
    expect(Date.parse(fresh.computedAt)).toBeGreaterThan(Date.parse(report.computedAt));
    expect(fresh.summary).toEqual(report.summary);
    expect(await world()).toEqual(before);
  });

  it('names a system still on its first sync, whose creates are decided later and not counted', async () => {
    const [kept] = await rows<{ reconciled_at: Date }>('SELECT reconciled_at FROM connection WHERE id = $1', [
      crmA,
    ]);
    await pool.query('UPDATE connection SET reconciled_at = NULL WHERE id = $1', [crmA]);
    try {
      const res = await reportOf(`/api/v1/connections/${crmB}/dry-run?refresh=true`);
      expect(res.statusCode, res.body).toBe(200);
      const waiting = res.json<DryRunReport>();
      expect(waiting.waitingTargets).toEqual(
        [
          {
            connectionId: crmA,
            provider: 'hubspot',
            displayName: 'CRM A',
            status: 'live',
            reconciled: false,
          },
          pendingC(),
        ].sort((x, y) => x.connectionId.localeCompare(y.connectionId)),
      );
      // The updates A is owed stand; the creates wait for its first sync to be linked.
      const toA = waiting.writes.find((w) => w.connectionId === crmA);
      expect(toA?.counts.create).toBeUndefined();
      expect(toA?.counts.update).toBeGreaterThan(0);
    } finally {
      await pool.query('UPDATE connection SET reconciled_at = $2 WHERE id = $1', [crmA, kept?.reconciled_at]);
    }
    const restored = await reportOf(`/api/v1/connections/${crmB}/dry-run?refresh=true`);
    expect(restored.json<DryRunReport>()).toMatchObject({
      waitingTargets: [pendingC()],
      summary: report.summary,
    });
    expect(await world()).toEqual(before);
  });

  it('never makes the live sync stage wait: its locks are free while a report is being computed', async () => {
    let checked = false;
    await computeDryRunReport(pool, crmB, {
      partitions: t.config.LOG_PARTITIONS,
      beforeRollback: async () => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(`SET LOCAL lock_timeout = '2s'`);
          // A's change to Ada (her entity row, outbox rows), and a new A record with the email of
          // one of B's staged records (identity's advisory lock on that key), as the workers run them.
          const live = new SyncHandler({
            identity: new IdentityService(),
            engine: engine(),
            connectionsTtlMs: 0,
          });
          await live.handle(client, [
            toEvent(person(ws.workspaceId, crmA, 'a-ada', T1, { lifecycleStage: 'customer' })),
            toEvent(person(ws.workspaceId, crmA, 'a-kate', T1, { email: 'katherine@nasa.example' })),
          ]);
          await client.query('SELECT 1 FROM connection WHERE workspace_id = $1 FOR UPDATE NOWAIT', [
            ws.workspaceId,
          ]);
          await client.query('SELECT 1 FROM entity WHERE workspace_id = $1 FOR UPDATE NOWAIT', [
            ws.workspaceId,
          ]);
          await client.query('SELECT 1 FROM outbox WHERE workspace_id = $1 FOR UPDATE NOWAIT', [
            ws.workspaceId,
          ]);
          // The simulated state is the dry run's alone.
          expect(
            await client.query('SELECT 1 FROM source_link WHERE connection_id = $1', [crmB]),
          ).toMatchObject({
            rowCount: 0,
          });
          checked = true;
        } finally {
          await client.query('ROLLBACK');
          client.release();
        }
      },
    });
    expect(checked).toBe(true);
    expect(await world()).toEqual(before);
  });

  it("is an admin's, in its own workspace only: 404 elsewhere or when not in dry run, 403 for sales, 400 for a bad limit", async () => {
    const elsewhere = await api('GET', `/api/v1/connections/${crmB}/dry-run`, other.adminKey);
    const nowhere = await api(
      'GET',
      '/api/v1/connections/00000000-0000-4000-8000-000000000000/dry-run',
      other.adminKey,
    );
    expect([elsewhere.statusCode, nowhere.statusCode]).toEqual([404, 404]);
    expect(elsewhere.json<{ error: { message: string } }>().error.message).toBe(
      nowhere
        .json<{ error: { message: string } }>()
        .error.message.replace('00000000-0000-4000-8000-000000000000', crmB),
    );
    expect((await api('POST', `/api/v1/connections/${crmB}/enable`, other.adminKey)).statusCode).toBe(404);
    const live = await api('GET', `/api/v1/connections/${crmA}/dry-run`);
    expect([live.statusCode, live.json<{ error: { code: string } }>().error.code]).toEqual([
      404,
      'not_found',
    ]);
    expect((await api('GET', `/api/v1/connections/${crmB}/dry-run`, salesKey)).statusCode).toBe(403);
    expect((await api('POST', `/api/v1/connections/${crmB}/enable`, salesKey)).statusCode).toBe(403);
    const bad = await api('GET', `/api/v1/connections/${crmB}/dry-run?limit=0`);
    expect([bad.statusCode, bad.json<{ error: { code: string } }>().error.code]).toEqual([
      400,
      'validation_failed',
    ]);
    const cut = await api('GET', `/api/v1/connections/${crmB}/dry-run?limit=1`);
    expect(cut.json<DryRunReport>()).toMatchObject({ truncated: true, summary: { links: 2 } });
    expect(cut.json<DryRunReport>().links).toHaveLength(1);
    expect(await world()).toEqual(before);
  });

  it('enables B: what it staged goes onto the log under its event keys, audited; the stage then does what the report said', async () => {
    const res = await api('POST', `/api/v1/connections/${crmB}/enable`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: crmB, dryRun: false, status: 'live' });
    expect(await rows('SELECT 1 FROM staged_change WHERE connection_id = $1', [crmB])).toEqual([]);
    const onLog = await rows<{ event_key: string }>(
      'SELECT event_key FROM change_event WHERE connection_id = $1 ORDER BY event_key',
      [crmB],
    );
    expect(onLog.map((r) => r.event_key).sort()).toEqual(
      [
        ...['b-ada', 'b-alan', 'b-katherine', 'b-linus'].map((id) => `contacts:${id}:${T1.getTime()}`),
        ...Array.from({ length: 11 }, (_, i) => `contacts:b-linus:jobtitle:${i + 1}`),
      ].sort(),
    );
    expect(
      await rows(`SELECT details FROM audit_log WHERE action = 'connection.enabled' AND target_id = $1`, [
        crmB,
      ]),
    ).toEqual([{ details: { moved: 15, previousStatus: 'live', wasDryRun: true } }]);

    const outboxBefore = Number(
      (await rows<{ max: string | null }>('SELECT max(id)::text AS max FROM outbox'))[0]?.max ?? 0,
    );
    await runSyncStage();
    // OutboxSweep.reconcile's turn: B is live, out of dry run, and the stage has read all of it.
    await queueReconcileCreates(pool, { id: crmB, workspace_id: ws.workspaceId, provider: 'hubspot' });

    // Links: the same records to the same entities, new entities under the ids reported.
    const links = await rows<{ external_id: string; entity_id: string }>(
      'SELECT external_id, entity_id::text AS entity_id FROM source_link WHERE connection_id = $1 ORDER BY external_id',
      [crmB],
    );
    const existed = new Set(
      (before.workspace.entity ?? []).map((json) => (JSON.parse(json) as { id: string }).id),
    );
    expect(links.filter((l) => existed.has(l.entity_id)).map((l) => [l.external_id, l.entity_id])).toEqual(
      report.links.map((l) => [l.externalId, l.entityId]),
    );
    expect(
      links
        .filter((l) => !existed.has(l.entity_id))
        .map((l) => [l.entity_id, [l.external_id]])
        .sort(),
    ).toEqual(report.creations.map((c) => [c.entityId, c.externalIds]).sort());
    for (const creation of report.creations) {
      const [row] = await rows<{ fields: unknown }>('SELECT fields FROM entity WHERE id = $1', [
        creation.entityId,
      ]);
      expect(row?.fields).toEqual(creation.fields);
    }

    // Entity changes: old → new per field, exactly as reported.
    const beforeFields = new Map(
      (before.workspace.entity ?? []).map((json) => {
        const row = JSON.parse(json) as { id: string; fields: Record<string, unknown> };
        return [row.id, row.fields] as const;
      }),
    );
    const actualChanges: Record<string, Record<string, { from: unknown; to: unknown }>> = {};
    for (const [id, old] of beforeFields) {
      const [now] = await rows<{ fields: Record<string, unknown> }>(
        'SELECT fields FROM entity WHERE id = $1',
        [id],
      );
      for (const field of new Set([...Object.keys(old), ...Object.keys(now?.fields ?? {})])) {
        const from = old[field] ?? null;
        const to = now?.fields[field] ?? null;
        if (!isDeepStrictEqual(from, to)) actualChanges[id] = { ...actualChanges[id], [field]: { from, to } };
      }
    }
    expect(actualChanges).toEqual(
      Object.fromEntries(
        report.changes.map((c) => [
          c.entityId,
          Object.fromEntries(Object.entries(c.fields).map(([f, v]) => [f, { from: v.from, to: v.to }])),
        ]),
      ),
    );

    // Conflicts: the same ones (their ids are derived from the edits), with the same outcome.
    const conflicts = await rows<{
      id: string;
      field: string;
      policy: string;
      status: string;
      candidates: unknown;
    }>(
      `SELECT id::text AS id, entity_id::text AS entity_id, field, kind, policy, status::text AS status, candidates
         FROM merge_conflict WHERE workspace_id = $1 ORDER BY entity_id, field, id`,
      [ws.workspaceId],
    );
    expect(before.workspace.merge_conflict).toEqual([]);
    expect(conflicts).toEqual(
      report.conflicts.map((c) => ({
        id: c.id,
        entity_id: c.entityId,
        field: c.field,
        kind: c.kind,
        policy: c.policy,
        status: c.status,
        candidates: c.candidates,
      })),
    );

    // Writes: every row the stage and the reconcile queued, per connection and operation.
    const outbox = await rows<{ connection_id: string; op: string; entity_id: string; fields: unknown }>(
      `SELECT connection_id::text AS connection_id, op, entity_id::text AS entity_id, external_id, fields
         FROM outbox WHERE id > $1 AND status = 'pending' ORDER BY connection_id, op, id`,
      [outboxBefore],
    );
    const counts = (list: { connection_id: string; op: string }[]) =>
      Object.fromEntries(
        [...new Set(list.map((r) => r.connection_id))].map((id) => [
          id,
          Object.fromEntries(
            [...new Set(list.filter((r) => r.connection_id === id).map((r) => r.op))].map((op) => [
              op,
              list.filter((r) => r.connection_id === id && r.op === op).length,
            ]),
          ),
        ]),
      );
    expect(counts(outbox)).toEqual(Object.fromEntries(report.writes.map((w) => [w.connectionId, w.counts])));
    // Few enough that every write is in the sample: the very rows, with their fields.
    const key = (w: { connection_id: string; op: string; entity_id: string }) =>
      `${w.connection_id}|${w.op}|${w.entity_id}`;
    const sorted = <T extends { connection_id: string; op: string; entity_id: string }>(list: T[]) =>
      [...list].sort((x, y) => key(x).localeCompare(key(y)));
    expect(sorted(outbox)).toEqual(
      sorted(
        report.writes.flatMap((w) =>
          w.sample.map((s) => ({
            connection_id: w.connectionId,
            op: s.op,
            entity_id: s.entityId,
            external_id: s.externalId,
            fields: s.fields,
          })),
        ),
      ),
    );
  });

  it('enabling again changes nothing and is not audited again; the report is gone with the dry run', async () => {
    const res = await api('POST', `/api/v1/connections/${crmB}/enable`);
    expect([res.statusCode, res.json<{ dryRun: boolean }>().dryRun]).toEqual([200, false]);
    expect(
      await rows(`SELECT 1 FROM audit_log WHERE action = 'connection.enabled' AND target_id = $1`, [crmB]),
    ).toHaveLength(1);
    expect((await api('GET', `/api/v1/connections/${crmB}/dry-run`)).statusCode).toBe(404);
    // From now on B's changes go straight to the log.
    const next = await log.append([
      person(ws.workspaceId, crmB, 'b-ada', new Date(), { jobTitle: 'Countess' }),
    ]);
    expect(next.ok && next.value[0]?.offset).not.toBeNull();
  });

  it('a disconnect drops what a dry run staged; reporting or enabling it then is refused (409)', async () => {
    const d = await connect('CRM D', true);
    expect((await log.append([person(ws.workspaceId, d.id, 'd-1', T1, { email: 'd@example.com' })])).ok).toBe(
      true,
    );
    expect(await rows('SELECT 1 FROM staged_change WHERE connection_id = $1', [d.id])).toHaveLength(1);
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/v1/connections/${d.id}`,
          headers: bearer(ws.adminKey),
        })
      ).statusCode,
    ).toBe(200);
    for (const [method, url] of [
      ['GET', `/api/v1/connections/${d.id}/dry-run`],
      ['POST', `/api/v1/connections/${d.id}/enable`],
    ] as const) {
      const res = await api(method, url);
      expect([res.statusCode, res.json<{ error: { code: string } }>().error.code]).toEqual([
        409,
        'connection_disconnected',
      ]);
    }
    expect(await rows('SELECT 1 FROM staged_change WHERE connection_id = $1', [d.id])).toEqual([]);
  });
});

function toEvent(change: ReturnType<typeof person>): LogEvent {
  return {
    ...change,
    entityType: 'person',
    op: 'upsert',
    partition: 0,
    offset: 0,
    fieldTimes: {},
    ingestedAt: new Date(),
    providerVersion: null,
    origin: null,
  };
}
