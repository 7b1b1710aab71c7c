import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import type { Json } from '../calendar/calendar-event';
import { type DeltaEntry, type DeltaToken, decodeToken, encodeToken } from '../delta';
import { originOf, requestUser } from '../graph-auth';
import { graphErrors } from '../graph-errors';
import { intParam, preferences, queryParam, selectParam } from '../graph-request';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { TodoDeltaRequest, TodoStore } from './todo.store';
import {
  parseTaskExpand,
  renderList,
  renderTask,
  type StoredList,
  type StoredTask,
  selectFields,
} from './todo-view';

type ListParams = { listId: string };
type TaskParams = { listId: string; id: string };

/** Graph's default page when a client names no size (?: assumed for To Do as for Outlook items). */
const DEFAULT_PAGE = 10;
const MAX_PAGE = 1000;

/**
 * Microsoft To Do of Graph v1.0 at its real paths: task lists (`/me/todo/lists`, with delta),
 * their tasks (create, read, update, delete, list, delta). Requests reach here past the token guard.
 */
export function registerTodoRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const todoOf = (req: FastifyRequest): TodoStore => state.current.mailbox(requestUser(req).id).todo;
  const context = (req: FastifyRequest, path: string) =>
    `${originOf(req)}/v1.0/$metadata#users('${requestUser(req).id}')/todo/${path}`;
  const lists = '/v1.0/me/todo/lists';

  app.get(lists, async (req) => {
    const select = selectParam(req);
    const page = paged(req, todoOf(req).allLists(), lists);
    return {
      '@odata.context': context(req, 'lists'),
      value: page.items.map((l) => selectFields(renderList(l), select, 'todoTaskList')),
      ...page.next,
    };
  });

  app.post(lists, async (req, reply) => {
    const list = todoOf(req).createList(req.body);
    return reply.code(201).send({ '@odata.context': context(req, 'lists/$entity'), ...renderList(list) });
  });

  app.get(`${lists}/delta`, async (req, reply) => {
    const todo = todoOf(req);
    return delta(req, reply, ctx, todo, `${lists}/delta`, 'todoTaskList', (token, request) =>
      todo.listDelta(token, request),
    );
  });

  app.get<{ Params: ListParams }>(`${lists}/:listId`, async (req) => ({
    '@odata.context': context(req, 'lists/$entity'),
    ...selectFields(renderList(todoOf(req).list(req.params.listId)), selectParam(req), 'todoTaskList'),
  }));

  app.patch<{ Params: ListParams }>(`${lists}/:listId`, async (req) => ({
    '@odata.context': context(req, 'lists/$entity'),
    ...renderList(todoOf(req).updateList(req.params.listId, req.body, ifMatch(req))),
  }));

  app.delete<{ Params: ListParams }>(`${lists}/:listId`, async (req, reply) => {
    todoOf(req).deleteList(req.params.listId, ifMatch(req));
    return reply.code(204).send();
  });

  const tasks = `${lists}/:listId/tasks`;
  const tasksContext = (req: FastifyRequest<{ Params: ListParams }>) =>
    context(req, `lists('${req.params.listId}')/tasks`);

  app.get<{ Params: ListParams }>(tasks, async (req) => {
    const todo = todoOf(req);
    const all = [...todo.list(req.params.listId).tasks.values()];
    const expand = parseTaskExpand(queryParam(req, '$expand'));
    const select = selectParam(req);
    const page = paged(req, all, `${lists}/${encodeURIComponent(req.params.listId)}/tasks`);
    return {
      '@odata.context': tasksContext(req),
      value: page.items.map((t) => selectFields(renderTask(t, expand), select, 'todoTask')),
      ...page.next,
    };
  });

  app.post<{ Params: ListParams }>(tasks, async (req, reply) => {
    const task = todoOf(req).createTask(req.params.listId, req.body);
    const inline = parseTaskExpand(inlineNames(req.body));
    return reply
      .code(201)
      .send({ '@odata.context': `${tasksContext(req)}/$entity`, ...renderTask(task, inline) });
  });

  app.get<{ Params: ListParams }>(`${tasks}/delta`, async (req, reply) => {
    const todo = todoOf(req);
    const path = `${lists}/${encodeURIComponent(req.params.listId)}/tasks/delta`;
    todo.list(req.params.listId);
    return delta(req, reply, ctx, todo, path, 'todoTask', (token, request) =>
      todo.taskDelta(req.params.listId, token, request),
    );
  });

  app.get<{ Params: TaskParams }>(`${tasks}/:id`, async (req) => ({
    '@odata.context': `${tasksContext(req)}/$entity`,
    ...selectFields(
      renderTask(
        todoOf(req).task(req.params.listId, req.params.id),
        parseTaskExpand(queryParam(req, '$expand')),
      ),
      selectParam(req),
      'todoTask',
    ),
  }));

  app.patch<{ Params: TaskParams }>(`${tasks}/:id`, async (req) => ({
    '@odata.context': `${tasksContext(req)}/$entity`,
    ...renderTask(todoOf(req).updateTask(req.params.listId, req.params.id, req.body, ifMatch(req))),
  }));

  app.delete<{ Params: TaskParams }>(`${tasks}/:id`, async (req, reply) => {
    todoOf(req).deleteTask(req.params.listId, req.params.id, ifMatch(req));
    return reply.code(204).send();
  });
}

/** A page of a collection by $top and $skip, and the nextLink to the rest. */
function paged<T>(req: FastifyRequest, all: T[], path: string): { items: T[]; next: Json } {
  const top = intParam(req, '$top', DEFAULT_PAGE, MAX_PAGE);
  const skip = intParam(req, '$skip', 0, Number.MAX_SAFE_INTEGER);
  if (top === 0) throw graphErrors.badRequest('Invalid value 0 for query option $top.');
  for (const option of ['$filter', '$orderby', '$search'])
    if (queryParam(req, option) !== undefined)
      throw graphErrors.badRequest(`The emulator does not support ${option} on To Do collections.`);
  const next = new URLSearchParams({ $top: String(top), $skip: String(skip + top) });
  for (const option of ['$select', '$expand']) {
    const value = queryParam(req, option);
    if (value !== undefined) next.set(option, value);
  }
  const more = skip + top < all.length;
  return {
    items: all.slice(skip, skip + top),
    next: more ? { '@odata.nextLink': `${originOf(req)}${path}?${decodeDollars(next)}` } : {},
  };
}

/**
 * One page of a To Do delta round (lists, or a list's tasks): nextLink until the round's
 * end, then the deltaLink; `$select` of the first call carried in the tokens.
 */
function delta<T extends StoredList | StoredTask>(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: EmulatorContext,
  todo: TodoStore,
  path: string,
  type: 'todoTask' | 'todoTaskList',
  page: (
    token: DeltaToken | undefined,
    request: TodoDeltaRequest,
  ) => { entries: DeltaEntry<T>[]; next: DeltaToken },
): Json {
  for (const option of ['$filter', '$orderby', '$search', '$expand', '$skip'])
    if (queryParam(req, option) !== undefined)
      throw graphErrors.badRequest(
        `The query option ${option} is not supported by the emulator's To Do delta.`,
      );
  const skipToken = queryParam(req, '$skiptoken');
  const deltaToken = queryParam(req, '$deltatoken');
  let token: DeltaToken | undefined;
  if (skipToken !== undefined) token = decodeToken(skipToken, 'skip');
  else if (deltaToken !== undefined) token = decodeToken(deltaToken, 'delta');
  if (token && token.p?.path !== path) throw graphErrors.syncStateNotFound(400);
  const user = requestUser(req);
  if (token && ctx.faults.take('microsoft', 'invalidate-cursors', user.userPrincipalName))
    todo.invalidateDelta();
  const selectText = queryParam(req, '$select');
  const params: Record<string, string> = token?.p ?? { path, ...(selectText ? { $select: selectText } : {}) };
  const select = params.$select?.split(',').map((s) => s.trim());
  if (!token) selectFields({}, select, type);
  const url = `${originOf(req)}${path}`;
  const pageSize = pageSizeOf(req);
  if (pageSize !== undefined) void reply.header('Preference-Applied', `odata.maxpagesize=${pageSize}`);
  const { entries, next } = page(token, {
    pageSize: pageSize ?? DEFAULT_PAGE,
    params,
    restartUrl: (p) => (p?.$select ? `${url}?$select=${encodeURIComponent(p.$select)}` : url),
  });
  const odataType = `#microsoft.graph.${type}`;
  return {
    '@odata.context': `${originOf(req)}/v1.0/$metadata#Collection(${type})`,
    ...(next.kind === 'skip'
      ? { '@odata.nextLink': `${url}?$skiptoken=${encodeToken(next)}` }
      : { '@odata.deltaLink': `${url}?$deltatoken=${encodeToken(next)}` }),
    value: entries.map((e) => {
      if (e.kind === 'removed')
        return { '@odata.type': odataType, id: e.id, '@removed': { reason: e.reason } };
      const rendered =
        type === 'todoTask' ? renderTask(e.item as StoredTask) : renderList(e.item as StoredList);
      return { '@odata.type': odataType, ...selectFields(rendered, select, type) };
    }),
  };
}

/** The page size `Prefer: odata.maxpagesize` asks for, when it asks. */
function pageSizeOf(req: FastifyRequest): number | undefined {
  const max = preferences(req).get('odata.maxpagesize');
  if (max !== undefined && /^\d+$/.test(max) && Number(max) > 0) return Math.min(Number(max), MAX_PAGE);
  return undefined;
}

/** The navigation properties a create carried inline: the answer shows them. */
function inlineNames(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  return ['checklistItems', 'linkedResources', 'extensions'].filter((k) => k in body).join(',');
}

function ifMatch(req: FastifyRequest): string | undefined {
  const header = req.headers['if-match'];
  return Array.isArray(header) ? header[0] : header;
}

/** Query option names keep their `$` in links, as Graph writes them. */
const decodeDollars = (params: URLSearchParams): string => params.toString().replaceAll('%24', '$');
