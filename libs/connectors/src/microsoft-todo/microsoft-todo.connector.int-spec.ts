import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cursor, PushWrite, WebhookRequest } from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { graphClient } from '../microsoft-common';
import { GraphNotificationReceiver } from '../microsoft-common/testing/graph-notification-receiver';
import { MicrosoftTestKit, type MicrosoftUser } from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftTodoConnector } from './microsoft-todo.connector';
import {
  defaultListId,
  notificationsIn,
  seedTask,
  taskIdOf,
  todoState,
} from './microsoft-todo.contract-harness';
import { ORIGIN_EXTENSION } from './todo-task.mapper';

const connector = createMicrosoftTodoConnector({ pageSize: 4, retry: { baseDelayMs: 10 } });
let kit: MicrosoftTestKit;
let receiver: GraphNotificationReceiver;

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
  receiver = await GraphNotificationReceiver.start();
});
afterAll(async () => {
  await receiver.close();
  await kit.close();
});

const createList = async (user: MicrosoftUser, displayName: string): Promise<string> =>
  (await kit.ui<{ id: string }>(user, 'POST', 'todo/lists', { displayName })).body.id;

async function seedIn(user: MicrosoftUser, listId: string, count: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push(await seedTask(kit, user, { title: `${prefix} ${n}` }, listId));
  return ids;
}

const upsertOf = (changes: readonly SourceChangeInput[], id: string) =>
  changes.filter((c) => c.externalId === id && c.op === 'upsert').at(-1);
const versionOf = (changes: readonly SourceChangeInput[], id: string) =>
  upsertOf(changes, id)?.providerVersion;
const chainKeys = (cursor: Cursor) =>
  Object.keys(cursor)
    .filter((k) => k.startsWith('list:'))
    .sort();

const create = (n: number, key: string, fields: Record<string, unknown> = {}): PushWrite => ({
  op: 'create',
  entityType: 'task',
  idempotencyKey: key,
  entityId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  fields: { title: `Ours ${n}`, notes: 'call back', dueAt: '2030-03-01T00:00:00.000Z', ...fields },
});

describe('microsoft-todo connector against the emulator', () => {
  it('backfills every list over pages, completed tasks included, into one pull cursor per list', async () => {
    const user = await kit.createUser('lists');
    const main = await defaultListId(kit, user);
    const work = await createList(user, 'Work');
    const home = await createList(user, 'Home');
    const ids = [
      ...(await seedIn(user, main, 5, 'Main')),
      ...(await seedIn(user, work, 3, 'Work')),
      ...(await seedIn(user, home, 2, 'Home')),
    ];
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(ids[5]!)}`, { status: 'completed' });
    const run = await drain(connector, kit.context(user), 'backfill', {});
    expect(run.pages).toBeGreaterThan(1);
    expect(run.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
    expect(new Set(changeKeys(run.changes)).size).toBe(run.changes.length);
    expect(run.changes.every((c) => c.op === 'upsert')).toBe(true);
    expect(upsertOf(run.changes, ids[5]!)!.fields).toMatchObject({
      status: 'completed',
      completedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/),
      listId: work,
    });
    expect(upsertOf(run.changes, ids[9]!)!.fields).toMatchObject({
      title: 'Home 1',
      status: 'open',
      listId: home,
    });
    expect(run.cursor).toMatchObject({
      v: 1,
      phase: 'pull',
      at: null,
      next: null,
      lists: expect.any(String),
    });
    expect(chainKeys(run.cursor)).toEqual([main, work, home].map((id) => `list:${id}`).sort());
    // Every chain holds a deltaLink: the pull needs no first round of its own.
    expect(chainKeys(run.cursor).every((k) => String(run.cursor[k]).includes('$deltatoken='))).toBe(true);
    // Pages honour `Prefer: odata.maxpagesize=4`: the default list's five tasks came in two
    // pages, the others in one each (Graph's default page of 10 would make three in all).
    const deltas = (await kit.requests(user)).filter((r) => r.path.includes('/tasks/delta'));
    expect(deltas).toHaveLength(4);
  });

  it('pulls edits, completions and deletes in every list; a list made after the backfill starts its own chain', async () => {
    const user = await kit.createUser('pull');
    const main = await defaultListId(kit, user);
    const work = await createList(user, 'Work');
    const [edited, completed, deleted] = await seedIn(user, main, 3, 'Main');
    const [inWork] = await seedIn(user, work, 1, 'Work');
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(edited!)}`, { title: 'Renamed' });
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(completed!)}`, { status: 'completed' });
    await kit.ui(user, 'DELETE', `todo/tasks/${taskIdOf(deleted!)}`);
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(inWork!)}`, { status: 'inProgress' });
    const later = await createList(user, 'Later');
    const inLater = await seedIn(user, later, 5, 'Later');

    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(upsertOf(pulled.changes, edited!)!.fields).toMatchObject({ title: 'Renamed' });
    expect(upsertOf(pulled.changes, completed!)!.fields).toMatchObject({
      status: 'completed',
      completedAt: expect.any(String),
    });
    expect(pulled.changes.find((c) => c.externalId === deleted)).toMatchObject({
      op: 'delete',
      fields: {},
      eventKey: `${taskIdOf(deleted!)}:removed`,
    });
    // inProgress is still open; the new version has a new key.
    expect(upsertOf(pulled.changes, inWork!)!.fields).toMatchObject({ status: 'open' });
    expect(backfill.changes.map((c) => c.eventKey)).not.toContain(
      upsertOf(pulled.changes, inWork!)!.eventKey,
    );
    // The new list's tasks, all of them, from its first round.
    expect(
      pulled.changes
        .filter((c) => c.externalId.startsWith(`${later}/`))
        .map((c) => c.externalId)
        .sort(),
    ).toEqual([...inLater].sort());
    expect(chainKeys(pulled.cursor)).toContain(`list:${later}`);
    // The same cursor again: the same keys; the next cursor: nothing new.
    const again = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(changeKeys(again.changes).sort()).toEqual(changeKeys(pulled.changes).sort());
    const quiet = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    expect(quiet.changes).toEqual([]);
  });

  it('ends the chain of a deleted list, before a pass or during one, and goes on with the others', async () => {
    const user = await kit.createUser('deleted-list');
    const graph = graphClient(kit.url, user.accessToken);
    const main = await defaultListId(kit, user);
    const gone = await createList(user, 'Gone');
    const [mainTask] = await seedIn(user, main, 1, 'Main');
    const goneTasks = await seedIn(user, gone, 2, 'Gone');
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    expect(chainKeys(backfill.cursor)).toContain(`list:${gone}`);

    await graph.api(`/me/todo/lists/${gone}`).delete();
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(mainTask!)}`, { title: 'Still here' });
    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(chainKeys(pulled.cursor)).toEqual([`list:${main}`]);
    expect(upsertOf(pulled.changes, mainTask!)!.fields).toMatchObject({ title: 'Still here' });
    // Graph names the list only; its tasks' delta went with it, so no task of it is reported.
    expect(pulled.changes.filter((c) => goneTasks.includes(c.externalId))).toEqual([]);

    // A list deleted after a pass read the lists, before it read the list's tasks: 404, chain ends.
    const extra = [await createList(user, 'A'), await createList(user, 'B'), await createList(user, 'C')];
    for (const id of extra) await seedIn(user, id, 1, 'Extra');
    const withExtra = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    expect(chainKeys(withExtra.cursor)).toEqual([main, ...extra].map((id) => `list:${id}`).sort());
    for (let n = 0; n < 3; n++)
      await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(mainTask!)}`, { title: `Edit ${n}` });
    const small = createMicrosoftTodoConnector({ pageSize: 1, maxRequestsPerPage: 1 });
    const first = unwrap(await small.pull(kit.context(user), withExtra.cursor));
    expect(first.done).toBe(false);
    // Lists are read in id order: one not yet read in this pass (at or after `at`) is deleted now.
    const doomed = extra.filter((id) => id >= String(first.cursor.at)).sort()[0];
    expect(doomed).toBeDefined();
    await graph.api(`/me/todo/lists/${doomed}`).delete();
    const mark = (await kit.requests(user)).length;
    const rest = await drain(small, kit.context(user), 'pull', first.cursor);
    expect(chainKeys(rest.cursor)).toEqual(
      [main, ...extra]
        .filter((id) => id !== doomed)
        .map((id) => `list:${id}`)
        .sort(),
    );
    const refused = (await kit.requests(user)).slice(mark).filter((r) => r.status === 404);
    expect(refused.map((r) => r.path.split('?')[0])).toEqual([`/v1.0/me/todo/lists/${doomed}/tasks/delta`]);
    expect(upsertOf([...first.changes, ...rest.changes], mainTask!)!.fields).toMatchObject({
      title: 'Edit 2',
    });
  });

  it('answers syncStateNotFound (400, or 410 with a Location) with CursorInvalid; the resync repeats every key', async () => {
    const user = await kit.createUser('resync');
    const main = await defaultListId(kit, user);
    const work = await createList(user, 'Work');
    const ids = [...(await seedIn(user, main, 5, 'Main')), ...(await seedIn(user, work, 3, 'Work'))];
    const first = await drain(connector, kit.context(user), 'backfill', {});
    for (const expiry of [{ status: 400 }, { status: 410, restart: true }]) {
      await kit.control(
        'POST',
        `/_emulator/microsoft/users/${encodeURIComponent(user.upn)}/todo/invalidate-delta`,
        expiry,
      );
      const refused = await connector.pull(kit.context(user), first.cursor);
      expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
      const again = await drain(connector, kit.context(user), 'backfill', {});
      expect(new Set(again.changes.map((c) => c.externalId))).toEqual(new Set(ids));
      expect(changeKeys(again.changes).sort()).toEqual(changeKeys(first.changes).sort());
      // The new cursor pulls.
      expect((await drain(connector, kit.context(user), 'pull', again.cursor)).changes).toEqual([]);
    }
    // A cursor without deltaLinks (none, or a backfill still running) sends the worker to backfill.
    const refusedCursors: Cursor[] = [
      {},
      { v: 1, phase: 'pull' },
      { ...first.cursor, phase: 'backfill' },
      { ...first.cursor, v: 0 },
    ];
    for (const cursor of refusedCursors) {
      const res = await connector.pull(kit.context(user), cursor);
      expect(res.ok ? 'ok' : res.error.code).toBe('CursorInvalid');
    }
  });

  it('creates once per key, tagged with our extension, in the default list or a list of its own it names', async () => {
    const user = await kit.createUser('create');
    const graph = graphClient(kit.url, user.accessToken);
    const main = await defaultListId(kit, user);
    const work = await createList(user, 'Work');
    const key = `key-${Date.now()}`;
    const [first] = unwrap(await connector.push(kit.context(user), [create(1, key)]));
    const [second] = unwrap(await connector.push(kit.context(user), [create(1, key)]));
    expect(second).toEqual(first);
    expect(first!.externalId.startsWith(`${main}/`)).toBe(true);
    const ext = (await graph
      .api(`/me/todo/lists/${main}/tasks/${taskIdOf(first!.externalId)}/extensions/${ORIGIN_EXTENSION}`)
      .get()) as Record<string, unknown>;
    expect(ext).toMatchObject({
      extensionName: ORIGIN_EXTENSION,
      idempotencyKey: key,
      entityId: create(1, key).entityId,
    });
    const creates = (await kit.requests(user)).filter(
      (r) => r.method === 'POST' && /^\/v1\.0\/me\/todo\/lists\/[^/]+\/tasks$/.test(r.path),
    );
    expect(creates).toHaveLength(1);

    const [inWork, foreign] = unwrap(
      await connector.push(kit.context(user), [
        create(2, `${key}-work`, { listId: work }),
        create(3, `${key}-foreign`, { listId: 'MDQ5NjE1NzY0MTkxNTQ3NTA4MzM6MDow' }),
      ]),
    );
    expect(inWork!.externalId.startsWith(`${work}/`)).toBe(true);
    expect(foreign!.externalId.startsWith(`${main}/`)).toBe(true);
    const state = await todoState(kit, user);
    expect(state.lists.find((l) => l.id === main)!.tasks).toHaveLength(2);
    expect(state.lists.find((l) => l.id === work)!.tasks).toHaveLength(1);
  });

  it('writes completion and due dates that read back as the receipt says; refuses what it cannot write', async () => {
    const user = await kit.createUser('write');
    const start = await drain(connector, kit.context(user), 'backfill', {});
    const [made] = unwrap(
      await connector.push(kit.context(user), [
        create(4, `w-${Date.now()}`, { dueAt: '2030-05-06T17:45:00.000Z' }),
      ]),
    );
    const update: PushWrite = {
      op: 'update',
      entityType: 'task',
      externalId: made!.externalId,
      idempotencyKey: `u-${Date.now()}`,
      entityId: 'e',
      fields: { status: 'completed', notes: null },
      expectedVersion: made!.providerVersion!,
    };
    const [done] = unwrap(await connector.push(kit.context(user), [update]));
    const pulled = await drain(connector, kit.context(user), 'pull', start.cursor);
    const echo = upsertOf(pulled.changes, made!.externalId)!;
    expect(echo.providerVersion).toBe(done!.providerVersion);
    expect(contentHash(echo.fields ?? {})).toBe(done!.contentHash);
    expect(echo.fields).toMatchObject({
      status: 'completed',
      notes: null,
      dueAt: '2030-05-06T00:00:00.000Z',
      completedAt: expect.stringMatching(/T00:00:00\.000Z$/),
    });
    // Reopened: open, and no completion date.
    const [reopened] = unwrap(
      await connector.push(kit.context(user), [
        {
          ...update,
          fields: { status: 'open' },
          expectedVersion: done!.providerVersion!,
          idempotencyKey: 'u2',
        },
      ]),
    );
    const after = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    expect(upsertOf(after.changes, made!.externalId)!.fields).toMatchObject({
      status: 'open',
      completedAt: null,
    });
    expect(contentHash(upsertOf(after.changes, made!.externalId)!.fields ?? {})).toBe(reopened!.contentHash);

    const mark = (await kit.requests(user)).length;
    for (const bad of [
      { ...update, entityType: 'meeting' as const },
      { ...update, op: 'merge' as const },
      { ...update, externalId: 'no-list' },
      { ...update, fields: { dueAt: 'whenever' } },
    ]) {
      const res = await connector.push(kit.context(user), [create(5, 'never-sent'), bad]);
      expect(res.ok ? 'ok' : res.error.code).toBe('Validation');
    }
    // Refused before anything was sent.
    expect((await kit.requests(user)).length).toBe(mark);
  });

  it('sends If-Match: a stale version is 412 → Conflict with the task as it is now; deletes are idempotent', async () => {
    const user = await kit.createUser('if-match');
    const [id] = await seedIn(user, await defaultListId(kit, user), 1, 'Main');
    // One connection throughout: `current` is compared with what its pull reports.
    const ctx = kit.context(user);
    const start = await drain(connector, ctx, 'backfill', {});
    const seen = versionOf(start.changes, id!)!;
    await kit.ui(user, 'PATCH', `todo/tasks/${taskIdOf(id!)}`, { title: 'Edited by the user' });
    const write = (op: 'update' | 'delete', key: string, expectedVersion?: string): PushWrite => ({
      op,
      entityType: 'task',
      externalId: id!,
      idempotencyKey: key,
      entityId: 'e',
      fields: op === 'update' ? { title: 'Ours' } : {},
      ...(expectedVersion ? { expectedVersion } : {}),
    });
    const mark = (await kit.requests(user)).length;
    const refused = await connector.push(ctx, [write('update', 'stale-update', seen)]);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('Conflict');
    // One write: no read first; the PATCH itself was refused with 412, then the task read once.
    const log = (await kit.requests(user)).slice(mark);
    expect(log.map((r) => `${r.method} ${r.status}`)).toEqual(['PATCH 412', 'GET 200']);
    const pulled = await drain(connector, ctx, 'pull', start.cursor);
    expect(refused.ok ? undefined : refused.error).toMatchObject({
      failedKeys: ['stale-update'],
      current: [upsertOf(pulled.changes, id!)],
    });
    expect(upsertOf(pulled.changes, id!)!.fields).toMatchObject({ title: 'Edited by the user' });

    const staleDelete = await connector.push(kit.context(user), [write('delete', 'stale-delete', seen)]);
    expect(staleDelete.ok ? 'ok' : staleDelete.error.code).toBe('Conflict');
    expect((await todoState(kit, user)).lists.flatMap((l) => l.tasks)).toHaveLength(1);
    const current = versionOf(pulled.changes, id!)!;
    unwrap(await connector.push(kit.context(user), [write('delete', 'delete', current)]));
    unwrap(await connector.push(kit.context(user), [write('delete', 'delete', current)]));
    expect((await todoState(kit, user)).deletedTaskIds).toContain(taskIdOf(id!));
    // An update of a task gone, based on a version: NotFound.
    const gone = await connector.push(kit.context(user), [write('update', 'gone', current)]);
    expect(gone.ok ? 'ok' : gone.error.code).toBe('NotFound');
  });

  it('subscribes on the default list, verifies and parses change and lifecycle notifications, unsubscribes', async () => {
    const user = await kit.createUser('webhooks');
    const main = await defaultListId(kit, user);
    const ttl = createMicrosoftTodoConnector({ subscriptionTtlMs: 60 * 60_000 });
    const token = `state-${Date.now()}`;
    const before = Date.now();
    const sub = unwrap(await ttl.subscribe!(kit.context(user), receiver.url, token));
    expect(sub.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 59 * 60_000);
    expect(sub.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    const listed = await kit.control<{ subscriptions: Record<string, unknown>[] }>(
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(listed.body.subscriptions.find((s) => s.id === sub.id)).toMatchObject({
      resource: `/me/todo/lists/${main}/tasks`,
      changeType: 'created,updated,deleted',
      notificationUrl: receiver.url,
      lifecycleNotificationUrl: receiver.url,
      clientState: token,
    });
    const secrets = {
      channels: [
        { id: 'another-subscription', token: 'another' },
        { id: sub.id, token },
      ],
    };
    const ofSub = (r: WebhookRequest, pick: (n: Record<string, unknown>) => boolean) =>
      notificationsIn(r.rawBody).some((n) => n.subscriptionId === sub.id && pick(n));

    // A change: a pull, whatever it was.
    await seedTask(kit, user, { title: 'Notify me' });
    const created = await receiver.waitFor((r) => ofSub(r, (n) => n.changeType === 'created'));
    expect(connector.verifyWebhook(created, secrets)).toEqual({ ok: true, value: undefined });
    expect(unwrap(connector.parseWebhook(created, { connectionId: 'c', workspaceId: 'w' }))).toEqual({
      kind: 'pull',
      reason: 'To Do tasks created',
    });
    // Forgeries: another subscription's id, one unknown item among good ones, not JSON, no channels, a GET.
    const items = notificationsIn(created.rawBody);
    const forged = (value: unknown[]) => ({ ...created, rawBody: JSON.stringify({ value }) });
    for (const bad of [
      forged(items.map((n) => ({ ...n, subscriptionId: 'another-subscription' }))),
      forged([...items, { ...items[0], subscriptionId: 'unknown', clientState: token }]),
      forged([]),
      { ...created, rawBody: 'validationToken' },
      { ...created, method: 'GET' },
    ]) {
      const verdict = connector.verifyWebhook(bad, secrets);
      expect(verdict.ok ? 'accepted' : verdict.error.code).toBe('Validation');
    }
    expect(connector.verifyWebhook(created, {}).ok).toBe(false);

    // Lifecycle events, as Graph sends them to the lifecycle URL.
    const expected = {
      reauthorizationRequired: { kind: 'pull', subscription: 'reauthorize' },
      missed: { kind: 'pull' },
      subscriptionRemoved: { kind: 'pull', subscription: 'recreate' },
    } as const;
    for (const [event, outcome] of Object.entries(expected)) {
      await kit.control('POST', `/_emulator/microsoft/subscriptions/${sub.id}/lifecycle`, { event });
      const notice = await receiver.waitFor((r) => ofSub(r, (n) => n.lifecycleEvent === event));
      expect(connector.verifyWebhook(notice, secrets)).toEqual({ ok: true, value: undefined });
      const parsed = unwrap(connector.parseWebhook(notice, { connectionId: 'c', workspaceId: 'w' }));
      expect(parsed).toMatchObject(outcome);
      if (!('subscription' in outcome)) expect(parsed).not.toHaveProperty('subscription');
    }

    // Removed by Graph (subscriptionRemoved): unsubscribing what is gone is done.
    unwrap(await connector.unsubscribe!(kit.context(user), sub));
    const renewed = unwrap(await connector.subscribe!(kit.context(user), receiver.url, token));
    unwrap(await connector.unsubscribe!(kit.context(user), renewed));
    const after = await kit.control<{ subscriptions: { id: string }[] }>(
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(after.body.subscriptions.map((s) => s.id)).not.toContain(renewed.id);
    const tooLong = await connector.subscribe!(kit.context(user), receiver.url, 'x'.repeat(129));
    expect(tooLong.ok ? 'ok' : tooLong.error.code).toBe('Validation');
  });
});
