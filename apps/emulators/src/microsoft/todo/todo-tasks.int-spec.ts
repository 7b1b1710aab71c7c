import type { Client } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;
let tasks: string;

/** Well-formed ids nobody has. */
const UNKNOWN_TASK = `AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A${'A'.repeat(44)}`;
const UNKNOWN_LIST = `AAMkAD${'A'.repeat(44)}`;

async function create(body: Json, path = tasks): Promise<Json> {
  const task = (await graph.api(path).post(body)) as Json;
  expectGraph('todoTask', task);
  return task;
}

async function get(id: string, query = ''): Promise<Json> {
  const task = (await graph.api(`${tasks}/${id}${query}`).get()) as Json;
  expectGraph('todoTask', task);
  return task;
}

/** Today at midnight UTC, as To Do stamps a completion. */
const today = () => `${new Date().toISOString().slice(0, 10)}T00:00:00.0000000`;

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  dana = await ms.account('dana@contoso.example');
  graph = dana.client;
  const lists = (await graph.api('/me/todo/lists').get()) as Json;
  tasks = `/me/todo/lists/${(lists.value as Json[])[0]!.id}/tasks`;
});

describe('task lists', () => {
  it('starts with the default list, and creates, renames and deletes others', async () => {
    const lists = (await graph.api('/me/todo/lists').get()) as Json;
    expectGraph('todoTaskListCollectionResponse', lists);
    expect(
      (lists.value as Json[]).map((l) => [l.displayName, l.wellknownListName, l.isOwner, l.isShared]),
    ).toEqual([['Tasks', 'defaultList', true, false]]);
    const groceries = (await graph.api('/me/todo/lists').post({ displayName: 'Groceries' })) as Json;
    expectGraph('todoTaskList', groceries);
    expect(groceries).toMatchObject({ displayName: 'Groceries', wellknownListName: 'none' });
    const renamed = (await graph
      .api(`/me/todo/lists/${groceries.id}`)
      .patch({ displayName: 'Shopping' })) as Json;
    expectGraph('todoTaskList', renamed);
    expect(renamed['@odata.etag']).not.toBe(groceries['@odata.etag']);
    await graph.api(`/me/todo/lists/${groceries.id}`).delete();
    expect(await graphRefusal(graph.api(`/me/todo/lists/${groceries.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    const defaultId = (lists.value as Json[])[0]!.id;
    expect(await graphRefusal(graph.api(`/me/todo/lists/${defaultId}`).delete())).toMatchObject({
      status: 400,
    });
    expect(await graphRefusal(graph.api('/me/todo/lists').post({}))).toMatchObject({ status: 400 });
  });
});

describe('tasks', () => {
  it('creates, reads, updates and deletes a task with status, importance, due and completion', async () => {
    const task = await create({
      title: 'File taxes',
      body: { content: 'Forms in the drawer', contentType: 'text' },
      importance: 'high',
      status: 'inProgress',
      categories: ['Home'],
      isReminderOn: true,
      reminderDateTime: { dateTime: '2030-04-29T09:00:00', timeZone: 'UTC' },
      // To Do keeps the date only: midnight in Berlin (summer time, +2) is 22:00 UTC the day before.
      dueDateTime: { dateTime: '2030-04-30T17:45:00', timeZone: 'W. Europe Standard Time' },
    });
    expect(task).toMatchObject({
      title: 'File taxes',
      status: 'inProgress',
      importance: 'high',
      isReminderOn: true,
      categories: ['Home'],
      hasAttachments: false,
      body: { content: 'Forms in the drawer', contentType: 'text' },
      dueDateTime: { dateTime: '2030-04-29T22:00:00.0000000', timeZone: 'UTC' },
      reminderDateTime: { dateTime: '2030-04-29T09:00:00.0000000', timeZone: 'UTC' },
    });
    expect(task).not.toHaveProperty('completedDateTime');
    expect(await get(String(task.id))).toMatchObject({ id: task.id, title: 'File taxes' });

    const done = (await graph.api(`${tasks}/${task.id}`).patch({ status: 'completed' })) as Json;
    expectGraph('todoTask', done);
    expect(done).toMatchObject({
      status: 'completed',
      completedDateTime: { dateTime: today(), timeZone: 'UTC' },
    });
    expect(done['@odata.etag']).not.toBe(task['@odata.etag']);
    expect(Date.parse(String(done.lastModifiedDateTime))).toBeGreaterThanOrEqual(
      Date.parse(String(task.lastModifiedDateTime)),
    );
    const given = (await graph.api(`${tasks}/${task.id}`).patch({
      completedDateTime: { dateTime: '2030-05-02T15:00:00', timeZone: 'UTC' },
    })) as Json;
    expect(given.completedDateTime).toEqual({ dateTime: '2030-05-02T00:00:00.0000000', timeZone: 'UTC' });
    const reopened = (await graph
      .api(`${tasks}/${task.id}`)
      .patch({ status: 'notStarted', importance: 'low' })) as Json;
    expect(reopened).toMatchObject({ status: 'notStarted', importance: 'low' });
    expect(reopened).not.toHaveProperty('completedDateTime');
    const noDue = (await graph.api(`${tasks}/${task.id}`).patch({ dueDateTime: null })) as Json;
    expect(noDue).not.toHaveProperty('dueDateTime');

    await graph.api(`${tasks}/${task.id}`).delete();
    expect(await graphRefusal(graph.api(`${tasks}/${task.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
  });

  it('refuses a stale If-Match with 412 and takes the current one', async () => {
    const task = await create({ title: 'Water plants' });
    const changed = (await graph
      .api(`${tasks}/${task.id}`)
      .header('If-Match', String(task['@odata.etag']))
      .patch({ title: 'Water the plants' })) as Json;
    expect(changed.title).toBe('Water the plants');
    const stale = () => graph.api(`${tasks}/${task.id}`).header('If-Match', String(task['@odata.etag']));
    expect(await graphRefusal(stale().patch({ title: 'Too late' }))).toMatchObject({ status: 412 });
    expect(await graphRefusal(stale().delete())).toMatchObject({ status: 412 });
    expect((await get(String(task.id))).title).toBe('Water the plants');
    await graph.api(`${tasks}/${task.id}`).header('If-Match', String(changed['@odata.etag'])).delete();
    expect(await graphRefusal(graph.api(`${tasks}/${task.id}`).get())).toMatchObject({ status: 404 });
  });

  it('refuses a status, importance or property Graph does not have with 400', async () => {
    expect(await graphRefusal(graph.api(tasks).post({ title: 'x', status: 'done' }))).toMatchObject({
      status: 400,
      code: 'BadRequest',
      message: "Cannot convert the literal 'done' to the expected type 'microsoft.graph.taskStatus'.",
    });
    const task = await create({ title: 'Valid', status: 'waitingOnOthers' });
    expect(task.status).toBe('waitingOnOthers');
    expect(await graphRefusal(graph.api(`${tasks}/${task.id}`).patch({ status: 'finished' }))).toMatchObject({
      status: 400,
    });
    expect(
      await graphRefusal(graph.api(`${tasks}/${task.id}`).patch({ importance: 'urgent' })),
    ).toMatchObject({
      status: 400,
    });
    expect(await graphRefusal(graph.api(`${tasks}/${task.id}`).patch({ priority: 1 }))).toMatchObject({
      status: 400,
      code: 'RequestBodyRead',
    });
    expect((await get(String(task.id))).status).toBe('waitingOnOthers');
  });

  it('answers 404 ErrorItemNotFound for unknown task and list ids, 400 for malformed ones', async () => {
    expect(await graphRefusal(graph.api(`${tasks}/${UNKNOWN_TASK}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api(`/me/todo/lists/${UNKNOWN_LIST}/tasks`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api(`${tasks}/${UNKNOWN_TASK}`).patch({ title: 'x' }))).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api(`${tasks}/nope`).get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidIdMalformed',
    });
  });

  it('keeps linked resources, checklist items and open extensions, given inline or added after', async () => {
    const task = await create({
      title: 'Call back',
      linkedResources: [
        { webUrl: 'https://crm.example/deals/7', applicationName: 'Syncline', externalId: 'deal-7' },
      ],
      checklistItems: [{ displayName: 'Find the number' }],
      extensions: [
        {
          '@odata.type': 'microsoft.graph.openTypeExtension',
          extensionName: 'com.syncline.origin',
          record: 'r-1',
        },
      ],
    });
    expect(task.linkedResources).toMatchObject([{ externalId: 'deal-7', applicationName: 'Syncline' }]);
    const step = (await graph
      .api(`${tasks}/${task.id}/checklistItems`)
      .post({ displayName: 'Dial', isChecked: true })) as Json;
    expectGraph('checklistItem', step);
    expect(typeof step.checkedDateTime).toBe('string');

    const expanded = await get(String(task.id), '?$expand=extensions,checklistItems,linkedResources');
    expect(expanded.extensions).toEqual([
      {
        '@odata.type': '#microsoft.graph.openTypeExtension',
        id: 'Microsoft.OutlookServices.OpenTypeExtension.com.syncline.origin',
        extensionName: 'com.syncline.origin',
        record: 'r-1',
      },
    ]);
    expectGraph('openTypeExtension', (expanded.extensions as Json[])[0]);
    expect((expanded.checklistItems as Json[]).map((c) => [c.displayName, c.isChecked])).toEqual([
      ['Find the number', false],
      ['Dial', true],
    ]);
    expect(expanded['@odata.etag']).not.toBe(task['@odata.etag']);
    expect(await get(String(task.id))).not.toHaveProperty('extensions');

    const ext = (await graph.api(`${tasks}/${task.id}/extensions/com.syncline.origin`).get()) as Json;
    expect(ext.record).toBe('r-1');
    const links = (await graph.api(`${tasks}/${task.id}/linkedResources`).get()) as Json;
    expectGraph('linkedResourceCollectionResponse', links);
    expect(
      await graphRefusal(
        graph.api(`${tasks}/${task.id}/extensions`).post({
          '@odata.type': 'microsoft.graph.openTypeExtension',
          extensionName: 'com.syncline.origin',
        }),
      ),
    ).toMatchObject({ status: 409 });
  });

  it('pages tasks by $top and lets the To Do app (control API) write into the default list', async () => {
    for (const n of [1, 2, 3]) await create({ title: `Task ${n}` });
    const page = (await graph.api(tasks).top(2).get()) as Json;
    expectGraph('todoTaskCollectionResponse', page);
    expect((page.value as Json[]).map((t) => t.title)).toEqual(['Task 1', 'Task 2']);
    const rest = (await graph.api(String(page['@odata.nextLink'])).get()) as Json;
    expect((rest.value as Json[]).map((t) => t.title)).toEqual(['Task 3']);
    expect(rest['@odata.nextLink']).toBeUndefined();

    const ui = `/_emulator/microsoft/users/${dana.upn}/ui/todo/tasks`;
    const typed = await ms.expectControl<Json>(201, 'POST', ui, {
      title: 'Typed in To Do',
      importance: 'high',
    });
    expectGraph('todoTask', typed);
    await ms.expectControl(200, 'PATCH', `${ui}/${typed.id}`, { status: 'completed' });
    expect((await get(String(typed.id))).status).toBe('completed');
    await ms.expectControl(204, 'DELETE', `${ui}/${typed.id}`);
    const state = await ms.expectControl<{ lists: Json[]; deletedTaskIds: string[] }>(
      200,
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/todo/tasks`,
    );
    expect((state.lists[0]!.tasks as Json[]).map((t) => t.title)).toEqual(['Task 1', 'Task 2', 'Task 3']);
    expect(state.deletedTaskIds).toEqual([typed.id]);
    expect((await ms.control('POST', ui, { title: 'x', status: 'done' })).status).toBe(400);
  });
});
