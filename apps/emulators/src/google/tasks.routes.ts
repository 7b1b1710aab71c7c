import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { guardDataPlane, requestUser } from './data-plane.hooks';
import type { GoogleStateRef } from './google-state';
import { boolParam, firstParam, intParam, type Query, timeParam } from './query-params';
import type { TaskListQuery } from './tasks.store';

type ListParams = { tasklist: string };
type TaskParams = { tasklist: string; task: string };

/** Tasks v1 at its real paths: task lists, and tasks list/get/insert/patch/update/delete/clear. */
export function registerTasksRoutes(app: FastifyInstance, ctx: EmulatorContext, state: GoogleStateRef): void {
  guardDataPlane(app, ctx, state, 'tasks');

  app.get('/tasks/v1/users/@me/lists', async (req) => requestUser(req).tasks.listLists());

  app.post('/tasks/v1/users/@me/lists', async (req) => requestUser(req).tasks.insertList(req.body));

  app.get<{ Params: ListParams }>('/tasks/v1/users/@me/lists/:tasklist', async (req) =>
    requestUser(req).tasks.getList(req.params.tasklist),
  );

  app.get<{ Params: ListParams }>('/tasks/v1/lists/:tasklist/tasks', async (req) => {
    const q = req.query as Query;
    return requestUser(req).tasks.list(req.params.tasklist, parseTaskQuery(q), firstParam(q, 'pageToken'));
  });

  app.post<{ Params: ListParams }>('/tasks/v1/lists/:tasklist/tasks', async (req) => {
    const parent = firstParam(req.query as Query, 'parent');
    return requestUser(req).tasks.insert(req.params.tasklist, req.body, parent ? { parent } : {});
  });

  app.get<{ Params: TaskParams }>('/tasks/v1/lists/:tasklist/tasks/:task', async (req) =>
    requestUser(req).tasks.get(req.params.tasklist, req.params.task),
  );

  app.patch<{ Params: TaskParams }>('/tasks/v1/lists/:tasklist/tasks/:task', async (req) =>
    requestUser(req).tasks.patch(req.params.tasklist, req.params.task, req.body),
  );

  app.put<{ Params: TaskParams }>('/tasks/v1/lists/:tasklist/tasks/:task', async (req) =>
    requestUser(req).tasks.update(req.params.tasklist, req.params.task, req.body),
  );

  app.delete<{ Params: TaskParams }>('/tasks/v1/lists/:tasklist/tasks/:task', async (req, reply) => {
    requestUser(req).tasks.delete(req.params.tasklist, req.params.task);
    return reply.code(204).send();
  });

  app.post<{ Params: ListParams }>('/tasks/v1/lists/:tasklist/clear', async (req, reply) => {
    requestUser(req).tasks.clearCompleted(req.params.tasklist);
    return reply.code(204).send();
  });
}

export function parseTaskQuery(q: Query): TaskListQuery {
  const query: TaskListQuery = {
    maxResults: intParam(q, 'maxResults', { def: 20, min: 1, max: 100 }),
    showCompleted: boolParam(q, 'showCompleted', true),
    showDeleted: boolParam(q, 'showDeleted', false),
    showHidden: boolParam(q, 'showHidden', false),
  };
  for (const key of ['updatedMin', 'completedMin', 'completedMax', 'dueMin', 'dueMax'] as const) {
    const value = timeParam(q, key);
    if (value !== undefined) query[key] = value;
  }
  return query;
}
