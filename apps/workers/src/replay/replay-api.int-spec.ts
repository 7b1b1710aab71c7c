import { randomUUID } from 'node:crypto';
import { ChangeLog } from '@syncline/log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, type TestApp } from '../../../sync-api/src/testing/test-app';
import { type ApiAndWorkers, eventually, startApiAndWorkers } from '../testing/api-and-workers';

/**
 * The replay routes with the real workers behind them: the API queues the job, the workers'
 * `workspace.replay` job runs it (the workers' own sync group merges the log meanwhile), and
 * the API serves status, progress and the report. Roles, workspaces and bodies are checked.
 */

let stack: ApiAndWorkers;
let t: TestApp;
let ws: { workspaceId: string; adminKey: string };
let other: { workspaceId: string; adminKey: string };
let salesKey: string;
let a: string;
let b: string;

const api = async <T = unknown>(
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  key: string,
  payload?: object,
) => {
  const res = await t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<T>() };
};

interface Replay {
  id: string;
  status: string;
  mode: string;
  from: unknown;
  createdBy: { keyId: string; label: string | null };
  progress: { eventsTotal: number | null; eventsReplayed: number };
  failureReason: string | null;
  report: {
    summary: Record<string, number>;
    changes: { entityId: string; fields: Record<string, { from: unknown; to: unknown }> }[];
  } | null;
}

const finished = (id: string, key = ws.adminKey) =>
  eventually(async () => {
    const res = await api<Replay>('GET', `/api/v1/replays/${id}`, key);
    expect(res.status).toBe(200);
    expect(['succeeded', 'failed']).toContain(res.body.status);
    return res.body;
  });

// One origin for the file: a replay `from` at(0) must cover the events written at at(1) and
// after, however long the tests between took.
const t0 = Date.now() - 600_000;
const at = (s: number) => new Date(t0 + s * 1000);
const contact = (connectionId: string, externalId: string, s: number, fields: Record<string, unknown>) => ({
  workspaceId: ws.workspaceId,
  connectionId,
  entityType: 'person',
  externalId,
  op: 'upsert',
  eventKey: `contacts:${externalId}:${s}`,
  eventTime: at(s),
  fields,
});

beforeAll(async () => {
  stack = await startApiAndWorkers({
    label: 'workers_replay',
    hubspot: { appId: 1, clientId: undefined, clientSecret: 'replay-secret' },
    logLevelVar: 'REPLAY_SPEC_LOG_LEVEL',
  });
  t = stack.t;
  ws = await seedWorkspace(t.prisma, 'Replays');
  other = await seedWorkspace(t.prisma, 'Elsewhere');
  salesKey = await createApiKey(t.app, ws.adminKey, 'sales', 'Dana');
  // Two CRMs, paused: nothing is pushed to them (no portal here), their changes still merge.
  [a, b] = [randomUUID(), randomUUID()];
  for (const id of [a, b])
    await stack.pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, 'hubspot', $3, 'paused')`,
      [id, ws.workspaceId, `portal-${id}`],
    );
  const person = { email: 'ada@analytical.example', firstName: 'Ada', lastName: 'Lovelace' };
  const appended = await t.app
    .get(ChangeLog)
    .append([
      contact(a, 'a-1', 0, { ...person, jobTitle: 'CTO' }),
      contact(b, 'b-1', 1, { ...person, jobTitle: 'Countess' }),
    ]);
  expect(appended.ok).toBe(true);
  // The workers' sync group merges them: lww, B's later title wins.
  await eventually(async () => {
    const res = await api<{ data: { fields: Record<string, unknown> }[] }>(
      'GET',
      '/api/v1/people?email=ada@analytical.example',
      ws.adminKey,
    );
    expect(res.body.data[0]?.fields.jobTitle).toBe('Countess');
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('POST /api/v1/replays', () => {
  it('is admin only (403 for sales), and checks its body (400 validation_failed)', async () => {
    const refused = await api<{ error: { code: string } }>('POST', '/api/v1/replays', salesKey, {
      from: 'beginning',
      mode: 'preview',
    });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    for (const body of [
      {},
      { from: 'beginning' },
      { from: 'yesterday', mode: 'preview' },
      { from: { eventTime: 'not a time' }, mode: 'apply' },
      { from: 'beginning', mode: 'dry' },
      { from: 'beginning', mode: 'preview', extra: 1 },
    ]) {
      const res = await api<{ error: { code: string; message: string } }>(
        'POST',
        '/api/v1/replays',
        ws.adminKey,
        body,
      );
      expect([res.status, res.body.error.code], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
    expect(await t.prisma.replay.count()).toBe(0);
  });

  it('a preview runs in the workers, reports the value a policy change would change, and writes nothing', async () => {
    const policy = await api('PUT', '/api/v1/policies/person', ws.adminKey, {
      fields: { jobTitle: { kind: 'priority', order: [a, b] } },
    });
    expect(policy.status).toBe(200);
    const before = await stack.pool.query('SELECT fields, version FROM entity WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    const created = await api<Replay>('POST', '/api/v1/replays', ws.adminKey, {
      from: 'beginning',
      mode: 'preview',
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      status: 'queued',
      mode: 'preview',
      from: 'beginning',
      report: null,
    });
    const done = await finished(created.body.id);
    expect(done.failureReason).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(done.progress).toEqual({ eventsTotal: 2, eventsReplayed: 2 });
    expect(done.report?.summary.changes).toBe(1);
    expect(done.report?.changes[0]?.fields.jobTitle).toMatchObject({ from: 'Countess', to: 'CTO' });
    const after = await stack.pool.query('SELECT fields, version FROM entity WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    expect(after.rows).toEqual(before.rows);
    // Listed, and audited.
    const list = await api<{ data: Replay[] }>('GET', '/api/v1/replays', ws.adminKey);
    expect(list.body.data.map((r) => r.id)).toEqual([created.body.id]);
    // Who asked, by name: the workspace's admin key.
    const adminKeyName = (await t.prisma.apiKey.findFirstOrThrow({ where: { workspaceId: ws.workspaceId } }))
      .name;
    expect(list.body.data[0]?.createdBy.label).toBe(adminKeyName);
    const audit = await api<{ data: { action: string; targetId: string }[] }>(
      'GET',
      '/api/v1/audit-log',
      ws.adminKey,
    );
    expect(audit.body.data).toContainEqual(
      expect.objectContaining({ action: 'replay.requested', targetId: created.body.id }),
    );
  });

  it('an apply changes the record; another workspace sees none of it (404)', async () => {
    const created = await api<Replay>('POST', '/api/v1/replays', ws.adminKey, {
      from: { eventTime: at(0).toISOString() },
      mode: 'apply',
    });
    expect(created.status).toBe(202);
    const seen = await api<{ error: { code: string } }>(
      'GET',
      `/api/v1/replays/${created.body.id}`,
      other.adminKey,
    );
    expect([seen.status, seen.body.error.code]).toEqual([404, 'not_found']);
    const listed = await api<{ data: Replay[] }>('GET', '/api/v1/replays', other.adminKey);
    expect(listed.body.data).toEqual([]);
    const done = await finished(created.body.id);
    expect([done.status, done.failureReason]).toEqual(['succeeded', null]);
    const person = await api<{ data: { fields: Record<string, unknown> }[] }>(
      'GET',
      '/api/v1/people?email=ada@analytical.example',
      ws.adminKey,
    );
    expect(person.body.data[0]?.fields.jobTitle).toBe('CTO');
    // A job retried after it applied does nothing: the row says succeeded.
    await stack.workers.jobs.enqueue('workspace.replay', { replayId: created.body.id });
    const [again] = (
      await stack.pool.query('SELECT attempts, status FROM replay WHERE id = $1', [created.body.id])
    ).rows as { attempts: number; status: string }[];
    expect(again?.status).toBe('succeeded');
  });

  it('refuses a second replay while one is queued or running (409 replay_running, naming it)', async () => {
    const running = await t.prisma.replay.create({
      data: { workspaceId: other.workspaceId, mode: 'apply', status: 'running', createdBy: randomUUID() },
    });
    const res = await api<{ error: { code: string; replayId: string } }>(
      'POST',
      '/api/v1/replays',
      other.adminKey,
      { from: 'beginning', mode: 'preview' },
    );
    expect([res.status, res.body.error.code]).toEqual([409, 'replay_running']);
    expect(res.body.error.replayId).toBe(running.id);
  });
});
