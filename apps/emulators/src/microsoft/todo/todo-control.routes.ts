import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { CONTROL_USERS, controlUser, registerInvalidateDelta, type UserParams } from '../control-common';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { TodoStore } from './todo.store';
import { renderList, renderTask, TASK_EXPANSIONS } from './todo-view';

type TaskParams = { upn: string; id: string };

const everything = new Set(TASK_EXPANSIONS);

/**
 * The To Do side of the Microsoft control API, under /_emulator/microsoft/users/{upn}: what
 * a person does in the To Do app (no If-Match; a task in the default list unless the body
 * names `listId`), the lists and tasks as stored (deleted ids too), and evicting every To Do
 * delta sync state. Bodies are Graph's todoTask and todoTaskList bodies.
 */
export function registerTodoControlRoutes(
  app: FastifyInstance,
  _ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const users = CONTROL_USERS;
  const userOf = controlUser(state);
  const todoOf = (user: MicrosoftUser): TodoStore => state.current.mailbox(user.id).todo;

  app.post<{ Params: UserParams }>(`${users}/:upn/ui/todo/lists`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    return reply.code(201).send(renderList(todoOf(user).createList(req.body)));
  });

  app.post<{ Params: UserParams }>(`${users}/:upn/ui/todo/tasks`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const todo = todoOf(user);
    const { listId, body } = splitListId(req.body, todo.defaultListId);
    return reply.code(201).send(renderTask(todo.createTask(listId, body), everything));
  });

  app.patch<{ Params: TaskParams }>(`${users}/:upn/ui/todo/tasks/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const todo = todoOf(user);
    const { listId } = todo.findTask(req.params.id);
    return renderTask(todo.updateTask(listId, req.params.id, req.body), everything);
  });

  app.delete<{ Params: TaskParams }>(`${users}/:upn/ui/todo/tasks/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const todo = todoOf(user);
    todo.deleteTask(todo.findTask(req.params.id).listId, req.params.id);
    return reply.code(204).send();
  });

  app.get<{ Params: UserParams }>(`${users}/:upn/todo/tasks`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const { lists, deletedListIds, deletedTaskIds } = todoOf(user).snapshot();
    return {
      lists: lists.map((l) => ({
        ...renderList(l),
        tasks: [...l.tasks.values()].map((t) => renderTask(t, everything)),
      })),
      deletedListIds,
      deletedTaskIds,
    };
  });

  registerInvalidateDelta(app, state, 'todo');
}

/** The control body's `listId` (the default list when absent), and the task body without it. */
function splitListId(body: unknown, defaultListId: string): { listId: string; body: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { listId: defaultListId, body };
  const { listId, ...rest } = body as Record<string, unknown>;
  return { listId: typeof listId === 'string' ? listId : defaultListId, body: rest };
}
