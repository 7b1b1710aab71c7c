import { type Client, ResponseType } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;
let listId: string;
let tasks: string;

const PAGE_OF_2 = 'odata.maxpagesize=2';

interface Round {
  pages: Json[];
  deltaLink: string;
  entries: Json[];
}

/** One delta round the way a connector runs it: follow nextLink to the end, keep the deltaLink. */
async function round(first: string, envelope: string, prefer = PAGE_OF_2): Promise<Round> {
  const pages: Json[] = [];
  let url = first;
  const path = first.startsWith('https://') ? new URL(first).pathname : `/v1.0${first.split('?')[0]}`;
  for (;;) {
    const page = (await graph.api(url).header('Prefer', prefer).get()) as Json;
    expectGraph(envelope, page);
    pages.push(page);
    const next = page['@odata.nextLink'];
    const delta = page['@odata.deltaLink'];
    expect([typeof next, typeof delta].sort(), 'a nextLink or a deltaLink, never both').toEqual([
      'string',
      'undefined',
    ]);
    if (typeof delta === 'string') {
      expect(delta.startsWith(`${ms.url}${path}?$deltatoken=`)).toBe(true);
      return { pages, deltaLink: delta, entries: pages.flatMap((p) => p.value as Json[]) };
    }
    expect(String(next).startsWith(`${ms.url}${path}?$skiptoken=`)).toBe(true);
    url = String(next);
  }
}

const changes = (r: Round, name = 'title') =>
  r.entries.map((e) => [e.id, e['@removed'] ? `removed:${(e['@removed'] as Json).reason}` : e[name]]);

const create = async (title: string, extra: Json = {}): Promise<Json> =>
  (await graph.api(tasks).post({ title, ...extra })) as Json;

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
  listId = String((lists.value as Json[])[0]!.id);
  tasks = `/me/todo/lists/${listId}/tasks`;
});

describe('task delta rounds', () => {
  it('pages the first round to a deltaLink, then reports changes, completions, removals and new tasks', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(String((await create(`Task ${n}`)).id));

    const raw = (await graph
      .api(`${tasks}/delta`)
      .header('Prefer', PAGE_OF_2)
      .responseType(ResponseType.RAW)
      .get()) as Response;
    expect(raw.headers.get('preference-applied')).toBe('odata.maxpagesize=2');
    const initial = await round(`${tasks}/delta`, 'todoTaskCollectionResponse');
    expect(initial.pages.map((p) => (p.value as Json[]).length)).toEqual([2, 2, 1]);
    expect(initial.entries.map((e) => e.id)).toEqual(ids);
    expect(initial.entries.every((e) => e['@odata.type'] === '#microsoft.graph.todoTask')).toBe(true);

    await graph.api(`${tasks}/${ids[1]}`).patch({ title: 'Task 2 renamed' });
    await graph.api(`${tasks}/${ids[2]}`).patch({ status: 'completed' });
    await graph.api(`${tasks}/${ids[3]}`).delete();
    const ui = `/_emulator/microsoft/users/${dana.upn}/ui/todo/tasks`;
    const typed = await ms.expectControl<Json>(201, 'POST', ui, { title: 'Typed in To Do' });
    await ms.expectControl(204, 'DELETE', `${ui}/${ids[4]}`);

    const next = await round(initial.deltaLink, 'todoTaskCollectionResponse');
    expect(changes(next)).toEqual([
      [ids[1], 'Task 2 renamed'],
      [ids[2], 'Task 3'],
      [ids[3], 'removed:deleted'],
      [typed.id, 'Typed in To Do'],
      [ids[4], 'removed:deleted'],
    ]);
    expect(next.entries[1]).toMatchObject({ status: 'completed', completedDateTime: { timeZone: 'UTC' } });
    expect(next.entries[2]).toEqual({
      '@odata.type': '#microsoft.graph.todoTask',
      id: ids[3],
      '@removed': { reason: 'deleted' },
    });
    expect((await round(next.deltaLink, 'todoTaskCollectionResponse')).entries).toEqual([]);
  });

  it('carries $select of the first call through the round', async () => {
    await create('Selected', { importance: 'high' });
    const initial = await round(`${tasks}/delta?$select=title,status`, 'todoTaskCollectionResponse');
    expect(Object.keys(initial.entries[0]!).sort()).toEqual([
      '@odata.etag',
      '@odata.type',
      'id',
      'status',
      'title',
    ]);
    expect(initial.deltaLink).not.toContain('select');
    await create('Second');
    const next = await round(initial.deltaLink, 'todoTaskCollectionResponse');
    expect(next.entries.map((e) => e.importance)).toEqual([undefined]);
  });
});

describe('task list delta rounds', () => {
  it('reports the default list first, then new, renamed and deleted lists', async () => {
    const initial = await round('/me/todo/lists/delta', 'todoTaskListCollectionResponse');
    expect(changes(initial, 'displayName')).toEqual([[listId, 'Tasks']]);
    expect(initial.entries[0]!['@odata.type']).toBe('#microsoft.graph.todoTaskList');
    const work = (await graph.api('/me/todo/lists').post({ displayName: 'Work' })) as Json;
    const home = (await graph.api('/me/todo/lists').post({ displayName: 'Home' })) as Json;
    await graph.api(`/me/todo/lists/${work.id}`).patch({ displayName: 'Office' });
    await graph.api(`/me/todo/lists/${home.id}`).delete();
    expect(changes(await round(initial.deltaLink, 'todoTaskListCollectionResponse'), 'displayName')).toEqual([
      [work.id, 'Office'],
      [home.id, 'removed:deleted'],
    ]);
  });
});

describe('To Do delta sync state', () => {
  it('answers syncStateNotFound once the sync state is evicted, by fault or by the control API', async () => {
    for (const n of [1, 2, 3]) await create(`Task ${n}`);
    const initial = await round(`${tasks}/delta`, 'todoTaskCollectionResponse');
    const lists = await round('/me/todo/lists/delta', 'todoTaskListCollectionResponse');

    await ms.fault({ kind: 'invalidate-cursors', account: dana.upn, count: 1 });
    expect(await graphRefusal(graph.api(initial.deltaLink).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    // The fault evicts every To Do sync state, the lists' too.
    expect(await graphRefusal(graph.api(lists.deltaLink).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    const resync = await round(`${tasks}/delta`, 'todoTaskCollectionResponse');
    expect(resync.entries).toHaveLength(3);

    const invalidate = `/_emulator/microsoft/users/${dana.upn}/todo/invalidate-delta`;
    await ms.expectControl(204, 'POST', invalidate, { status: 400 });
    expect(await graphRefusal(graph.api(resync.deltaLink).get())).toMatchObject({
      status: 400,
      code: 'syncStateNotFound',
    });

    const again = await round(`${tasks}/delta`, 'todoTaskCollectionResponse');
    await ms.expectControl(204, 'POST', invalidate, { restart: true });
    const gone = await graphRefusal(graph.api(again.deltaLink).get());
    expect(gone).toMatchObject({ status: 410, code: 'syncStateNotFound' });
    expect(gone.headers?.get('location')).toBe(`${ms.url}/v1.0${tasks}/delta`);
  });

  it("refuses one list's token on another list's delta", async () => {
    const other = (await graph.api('/me/todo/lists').post({ displayName: 'Other' })) as Json;
    const initial = await round(`${tasks}/delta`, 'todoTaskCollectionResponse');
    const token = new URL(initial.deltaLink).searchParams.get('$deltatoken');
    expect(
      await graphRefusal(graph.api(`/me/todo/lists/${other.id}/tasks/delta?$deltatoken=${token}`).get()),
    ).toMatchObject({ status: 400, code: 'syncStateNotFound' });
  });
});
