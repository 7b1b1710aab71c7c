import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { originOf, requestUser } from '../graph-auth';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { TodoStore } from './todo.store';
import { renderChecklistItem, renderExtension, renderLinkedResource } from './todo-children';

type TaskParams = { listId: string; id: string };
type ChildParams = TaskParams & { childId: string };

/**
 * What hangs off a To Do task at its real paths: checklist items (steps), linked resources
 * (the record a task came from) and open extensions (an app's own data, how a client tags
 * what it wrote: To Do tasks have no extended properties). Each write is a change of the task.
 */
export function registerTodoChildRoutes(
  app: FastifyInstance,
  _ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const todoOf = (req: FastifyRequest): TodoStore => state.current.mailbox(requestUser(req).id).todo;
  const task = '/v1.0/me/todo/lists/:listId/tasks/:id';
  const context = (req: FastifyRequest<{ Params: TaskParams }>, nav: string) =>
    `${originOf(req)}/v1.0/$metadata#users('${requestUser(req).id}')/todo/lists('${req.params.listId}')/tasks('${req.params.id}')/${nav}`;

  app.get<{ Params: TaskParams }>(`${task}/checklistItems`, async (req) => ({
    '@odata.context': context(req, 'checklistItems'),
    value: [...todoOf(req).task(req.params.listId, req.params.id).checklist.values()].map(
      renderChecklistItem,
    ),
  }));

  app.post<{ Params: TaskParams }>(`${task}/checklistItems`, async (req, reply) => {
    const item = todoOf(req).writeChecklistItem(req.params.listId, req.params.id, undefined, req.body);
    return reply
      .code(201)
      .send({ '@odata.context': context(req, 'checklistItems/$entity'), ...renderChecklistItem(item) });
  });

  app.patch<{ Params: ChildParams }>(`${task}/checklistItems/:childId`, async (req) => ({
    '@odata.context': context(req, 'checklistItems/$entity'),
    ...renderChecklistItem(
      todoOf(req).writeChecklistItem(req.params.listId, req.params.id, req.params.childId, req.body),
    ),
  }));

  app.delete<{ Params: ChildParams }>(`${task}/checklistItems/:childId`, async (req, reply) => {
    todoOf(req).deleteChild(req.params.listId, req.params.id, 'checklist', req.params.childId);
    return reply.code(204).send();
  });

  app.get<{ Params: TaskParams }>(`${task}/linkedResources`, async (req) => ({
    '@odata.context': context(req, 'linkedResources'),
    value: [...todoOf(req).task(req.params.listId, req.params.id).linked.values()].map(renderLinkedResource),
  }));

  app.post<{ Params: TaskParams }>(`${task}/linkedResources`, async (req, reply) => {
    const link = todoOf(req).addLinkedResource(req.params.listId, req.params.id, req.body);
    return reply
      .code(201)
      .send({ '@odata.context': context(req, 'linkedResources/$entity'), ...renderLinkedResource(link) });
  });

  app.delete<{ Params: ChildParams }>(`${task}/linkedResources/:childId`, async (req, reply) => {
    todoOf(req).deleteChild(req.params.listId, req.params.id, 'linked', req.params.childId);
    return reply.code(204).send();
  });

  app.get<{ Params: TaskParams }>(`${task}/extensions`, async (req) => ({
    '@odata.context': context(req, 'extensions'),
    value: [...todoOf(req).task(req.params.listId, req.params.id).extensions.values()].map(renderExtension),
  }));

  app.post<{ Params: TaskParams }>(`${task}/extensions`, async (req, reply) => {
    const ext = todoOf(req).addExtension(req.params.listId, req.params.id, req.body);
    return reply
      .code(201)
      .send({ '@odata.context': context(req, 'extensions/$entity'), ...renderExtension(ext) });
  });

  app.get<{ Params: ChildParams }>(`${task}/extensions/:childId`, async (req) => ({
    '@odata.context': context(req, 'extensions/$entity'),
    ...renderExtension(todoOf(req).extension(req.params.listId, req.params.id, req.params.childId)),
  }));

  app.delete<{ Params: ChildParams }>(`${task}/extensions/:childId`, async (req, reply) => {
    todoOf(req).deleteChild(req.params.listId, req.params.id, 'extensions', req.params.childId);
    return reply.code(204).send();
  });
}
