import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cursor, PushWrite } from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { GoogleTestKit, type GoogleUser } from '../google-common/testing/google-test-kit';
import { createGoogleTasksConnector } from './google-tasks.connector';

const connector = createGoogleTasksConnector({ pageSize: 4, overlapMs: 1_000, retry: { baseDelayMs: 10 } });
let kit: GoogleTestKit;

interface SeededTask {
  id: string;
  selfLink: string;
}
const listOf = (t: SeededTask) => /\/lists\/([^/]+)\/tasks\//.exec(t.selfLink)![1]!;

async function seed(user: GoogleUser, count: number, tasklist?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const t = (
      await kit.ui<SeededTask>(user, 'POST', 'tasks', {
        title: `Task ${n}`,
        ...(tasklist ? { tasklist } : {}),
      })
    ).body;
    ids.push(`${listOf(t)}/${t.id}`);
  }
  return ids;
}
const taskId = (externalId: string) => externalId.split('/')[1]!;

const create = (n: number, key: string): PushWrite => ({
  op: 'create',
  entityType: 'task',
  idempotencyKey: key,
  entityId: '00000000-0000-4000-8000-000000000002',
  fields: { title: `Ours ${n}`, notes: 'call back', dueAt: '2030-03-01T00:00:00.000Z' },
});

beforeAll(async () => {
  kit = await GoogleTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('google-tasks connector against the emulator', () => {
  it('backfills every list over pages, hidden completed tasks included, deleted ones not', async () => {
    const user = await kit.createUser('backfill');
    const ctx = kit.context(user);
    const ids = await seed(user, 9);
    // Completed in Google's app: hidden, and still ours to sync.
    await kit.ui(user, 'PATCH', `tasks/${taskId(ids[0]!)}`, { status: 'completed' });
    const [gone] = await seed(user, 1);
    await kit.ui(user, 'DELETE', `tasks/${taskId(gone!)}`);
    const run = await drain(connector, ctx, 'backfill', {});
    expect(run.pages).toBeGreaterThan(2);
    expect(run.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
    expect(new Set(run.changes.map((c) => c.eventKey)).size).toBe(run.changes.length);
    expect(run.changes.find((c) => c.externalId === ids[0])!.fields).toMatchObject({
      status: 'completed',
      completedAt: expect.any(String),
    });
    expect(run.cursor).toMatchObject({ v: 1, since: expect.any(String), list: null });
  });

  it('resumes from a saved cursor after a crash with no gap and no duplicate', async () => {
    const user = await kit.createUser('resume');
    const ids = await seed(user, 14);
    const committed: SourceChangeInput[] = [];
    let cursor: Cursor = {};
    for (let i = 0; i < 2; i++) {
      const page = unwrap(await connector.backfill(kit.context(user), cursor));
      committed.push(...page.changes);
      cursor = JSON.parse(JSON.stringify(page.cursor)) as Cursor;
    }
    unwrap(await connector.backfill(kit.context(user), cursor));
    const rest = await drain(connector, kit.context(user), 'backfill', cursor);
    committed.push(...rest.changes);
    expect(new Set(committed.map((c) => c.externalId))).toEqual(new Set(ids));
    expect(new Set(changeKeys(committed)).size).toBe(committed.length);
  });

  it('pulls edits as upserts and deletes as tombstones; overlapping pulls repeat the same keys', async () => {
    const user = await kit.createUser('pull');
    const [changed, deleted] = await seed(user, 5);
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    await new Promise((r) => setTimeout(r, 5));
    await kit.ui(user, 'PATCH', `tasks/${taskId(changed!)}`, { title: 'Renamed' });
    await kit.ui(user, 'DELETE', `tasks/${taskId(deleted!)}`);
    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    const upsert = pulled.changes.find((c) => c.externalId === changed && c.op === 'upsert');
    expect(upsert).toMatchObject({ fields: { title: 'Renamed' } });
    expect(backfill.changes.map((c) => c.eventKey)).not.toContain(upsert!.eventKey);
    expect(pulled.changes.find((c) => c.externalId === deleted)).toMatchObject({ op: 'delete', fields: {} });
    const again = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(changeKeys(again.changes).sort()).toEqual(changeKeys(pulled.changes).sort());
    // A cursor from another version (or a backfill one) is refused, sending the worker to resync.
    const stale = await connector.pull(kit.context(user), { since: '2030-01-01T00:00:00Z' });
    expect(stale.ok ? 'ok' : stale.error.code).toBe('CursorInvalid');
  });

  it('creates idempotently through a marker in the notes: the same key twice makes one task', async () => {
    const user = await kit.createUser('idem');
    const w = create(1, `key-${Date.now()}`);
    const [first] = unwrap(await connector.push(kit.context(user), [w]));
    const [second] = unwrap(await connector.push(kit.context(user), [w]));
    expect(second).toEqual(first);
    const all = await kit.state<{ id: string; notes?: string; deleted?: boolean }[]>(user, 'tasks');
    expect(all.filter((t) => !t.deleted)).toHaveLength(1);
    expect(all[0]!.notes).toMatch(/^call back\n\n\[syncline:[0-9a-f]{24}\]$/);
    const inserts = (await kit.requests(user.email)).filter(
      (r) => r.method === 'POST' && r.path.includes('/tasks'),
    );
    expect(inserts).toHaveLength(1);
  });

  it('creates in the list the fields name when it is the account’s, else in the default list', async () => {
    const user = await kit.createUser('lists');
    // A second list, made as an app makes one (tasklists.insert).
    const made = await fetch(`${kit.url}/tasks/v1/users/@me/lists`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Deals' }),
    });
    const ownList = ((await made.json()) as { id: string }).id;
    const ctx = kit.context(user);
    const [inOwn] = unwrap(
      await connector.push(ctx, [
        { ...create(1, `own-${Date.now()}`), fields: { title: 'Here', listId: ownList } },
      ]),
    );
    expect(inOwn!.externalId.split('/')[0]).toBe(ownList);
    // A task made in Microsoft To Do carries To Do's list id: it names no list here.
    const [foreign] = unwrap(
      await connector.push(ctx, [
        {
          ...create(2, `foreign-${Date.now()}`),
          fields: { title: 'There', listId: 'AAMkADdlist-of-another-provider' },
        },
      ]),
    );
    const defaultList = (await kit.state<{ id: string; title: string; selfLink: string }[]>(user, 'tasks'))
      .filter((t) => t.title === 'There')
      .map((t) => listOf(t));
    expect(foreign!.externalId.split('/')[0]).toBe(defaultList[0]);
    expect(defaultList[0]).not.toBe(ownList);
  });

  it('recognises its own echo by content hash; updates and deletes idempotently', async () => {
    const user = await kit.createUser('echo');
    await seed(user, 2);
    const start = await drain(connector, kit.context(user), 'backfill', {});
    const [receipt] = unwrap(await connector.push(kit.context(user), [create(2, `echo-${Date.now()}`)]));
    const pulled = await drain(connector, kit.context(user), 'pull', start.cursor);
    const echo = pulled.changes.find((c) => c.externalId === receipt!.externalId)!;
    expect(echo.fields).toMatchObject({ notes: 'call back', title: 'Ours 2' });
    expect(contentHash(echo.fields ?? {})).toBe(receipt!.contentHash);
    const update: PushWrite = {
      op: 'update',
      entityType: 'task',
      externalId: receipt!.externalId,
      idempotencyKey: `u-${Date.now()}`,
      entityId: 'e',
      fields: { status: 'completed' },
    };
    const [updated] = unwrap(await connector.push(kit.context(user), [update]));
    expect(updated!.contentHash).not.toBe(receipt!.contentHash);
    const del = { ...update, op: 'delete' as const, fields: {} };
    unwrap(await connector.push(kit.context(user), [del]));
    unwrap(await connector.push(kit.context(user), [del]));
  });

  it('retries injected 429s and 5xx within the budget and loses nothing', async () => {
    const user = await kit.createUser('faults', { rateLimitStatus: 429 });
    const ids = await seed(user, 9);
    await kit.fault({ kind: 'rate-limit', account: user.email, count: 2 });
    await kit.fault({ kind: 'server-error', account: user.email, count: 2 });
    const run = await drain(connector, kit.context(user), 'backfill', {});
    expect(new Set(run.changes.map((c) => c.externalId))).toEqual(new Set(ids));
    const statuses = (await kit.requests(user.email)).map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(2);
  });

  it('answers AuthRevoked when the grant is revoked, for pulls and pushes', async () => {
    const user = await kit.createUser('revoked');
    await seed(user, 2);
    await kit.fault({ kind: 'revoke-token', account: user.email, count: 1 });
    const res = await connector.backfill(kit.context(user), {});
    expect(res.ok ? 'ok' : res.error.code).toBe('AuthRevoked');
    const push = await connector.push(kit.context(user), [create(3, 'revoked')]);
    expect(push.ok ? 'ok' : push.error.code).toBe('AuthRevoked');
    expect((await kit.requests(user.email)).length).toBeLessThan(8);
  });
});
