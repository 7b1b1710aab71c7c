import type { tasks_v1 } from 'googleapis/build/src/apis/tasks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectSchema } from './testing/expect-schema';
import { type CreatedUser, GoogleHarness } from './testing/google-harness';

let google: GoogleHarness;
let user: CreatedUser;
let tasks: tasks_v1.Tasks;

beforeAll(async () => {
  google = await GoogleHarness.start();
});

afterAll(async () => {
  await google.close();
});

beforeEach(async () => {
  await google.control('POST', '/_emulator/reset');
  user = await google.createUser('dana@example.com');
  tasks = google.tasks(google.oauthClient(user));
});

async function titles(params: Omit<tasks_v1.Params$Resource$Tasks$List, 'tasklist'>): Promise<string[]> {
  const out: string[] = [];
  let pageToken: string | undefined;
  do {
    const res = await tasks.tasks.list({
      tasklist: '@default',
      ...params,
      ...(pageToken ? { pageToken } : {}),
    });
    expectSchema('tasks', 'Tasks', res.data);
    out.push(...(res.data.items ?? []).map((t) => `${t.title}${t.deleted ? ' (deleted)' : ''}`));
    pageToken = res.data.nextPageToken ?? undefined;
  } while (pageToken);
  return out;
}

describe('tasks.list', () => {
  it('returns what changed since updatedMin, deletions only with showDeleted', async () => {
    const lists = await tasks.tasklists.list();
    expectSchema('tasks', 'TaskLists', lists.data);
    expect(lists.data.items?.map((l) => l.title)).toEqual(['My Tasks']);

    const insert = async (title: string) =>
      (
        await tasks.tasks.insert({
          tasklist: '@default',
          requestBody: { title, notes: 'n', due: '2030-02-01T15:00:00Z' },
        })
      ).data;
    const a = await insert('A');
    const b = await insert('B');
    const c = await insert('C');
    await insert('D (untouched)');
    expectSchema('tasks', 'Task', a);
    expect(a).toMatchObject({ kind: 'tasks#task', status: 'needsAction', due: '2030-02-01T00:00:00.000Z' });

    google.advanceClock(60_000);
    const since = new Date(google.ctx.now()).toISOString();
    google.advanceClock(1000);
    await tasks.tasks.patch({ tasklist: '@default', task: a.id!, requestBody: { title: 'A2' } });
    const completed = await tasks.tasks.patch({
      tasklist: '@default',
      task: b.id!,
      requestBody: { status: 'completed' },
    });
    expectSchema('tasks', 'Task', completed.data);
    expect(completed.data.completed).toBe(new Date(google.ctx.now()).toISOString());
    await tasks.tasks.delete({ tasklist: '@default', task: c.id! });
    // Completed in Google's own app: comes back hidden.
    await google.control('POST', `/_emulator/google/users/${user.email}/ui/tasks`, {
      title: 'E',
      status: 'completed',
    });

    expect(await titles({ updatedMin: since })).toEqual(['A2', 'B']);
    expect(await titles({ updatedMin: since, showDeleted: true })).toEqual(['A2', 'B', 'C (deleted)']);
    expect(await titles({ updatedMin: since, showDeleted: true, showHidden: true })).toEqual([
      'A2',
      'B',
      'C (deleted)',
      'E',
    ]);
    expect(await titles({ updatedMin: since, showCompleted: false, showDeleted: true })).toEqual([
      'A2',
      'C (deleted)',
    ]);
    expect(await titles({ maxResults: 2, showDeleted: true, showHidden: true })).toEqual([
      'A2',
      'B',
      'C (deleted)',
      'D (untouched)',
      'E',
    ]);
  });

  it('edits through the UI routes and shows them in the state view', async () => {
    const created = await google.control<tasks_v1.Schema$Task>(
      'POST',
      `/_emulator/google/users/${user.email}/ui/tasks`,
      {
        title: 'Call Lee',
      },
    );
    expect(created.status).toBe(201);
    await google.control('PATCH', `/_emulator/google/users/${user.email}/ui/tasks/${created.body.id}`, {
      notes: 'about Q3',
    });
    const fetched = await tasks.tasks.get({ tasklist: '@default', task: created.body.id! });
    expectSchema('tasks', 'Task', fetched.data);
    expect(fetched.data.notes).toBe('about Q3');
    await google.control('DELETE', `/_emulator/google/users/${user.email}/ui/tasks/${created.body.id}`);
    const state = await google.control<{ id: string; deleted?: boolean }[]>(
      'GET',
      `/_emulator/google/users/${user.email}/tasks`,
    );
    expect(state.body).toMatchObject([{ id: created.body.id, deleted: true }]);
  });
});
