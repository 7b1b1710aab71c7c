import { etagOf } from '../calendar/event-ids';
import { type DeltaEntry, DeltaJournal, type DeltaToken, type Expand, type Expiry } from '../delta';
import { GraphError, graphErrors } from '../graph-errors';
import { type ChangeType, ignoreChanges, type OnMailboxChange } from '../subscriptions/mailbox-change';
import {
  type ChecklistItem,
  extensionKey,
  type LinkedResource,
  type OpenExtension,
  writeChecklistItem,
  writeExtension,
  writeLinkedResource,
} from './todo-children';
import { checkListId, checkTaskId, newListId, newTaskId, newTodoVersionKey } from './todo-ids';
import { applyTaskWrite } from './todo-task';
import type { StoredList, StoredTask, TodoVersion } from './todo-view';

export interface TodoDeltaRequest {
  pageSize: number;
  /** The initial call's options, carried inside the tokens. */
  params: Record<string, string>;
  restartUrl: (params: Record<string, string> | undefined) => string;
}

/**
 * One mailbox's Microsoft To Do: task lists (a default one, "Tasks", from the start), their
 * tasks with checklist items, linked resources and open extensions, a change journal of the
 * lists and one per list for its tasks.
 */
export class TodoStore {
  private readonly lists = new Map<string, StoredList>();
  private readonly listJournal = new DeltaJournal<StoredList>();
  private readonly deletedTaskIds: string[] = [];
  readonly defaultListId: string;

  constructor(
    readonly now: () => number,
    private readonly onChange: OnMailboxChange = ignoreChanges,
  ) {
    this.defaultListId = this.addList('Tasks', 'defaultList').id;
  }

  allLists(): StoredList[] {
    return [...this.lists.values()];
  }

  list(id: string): StoredList {
    checkListId(id);
    const list = this.lists.get(id);
    if (!list) throw graphErrors.notFound();
    return list;
  }

  createList(body: unknown): StoredList {
    return this.addList(displayNameOf(body, true)!, 'none');
  }

  updateList(id: string, body: unknown, ifMatch?: string): StoredList {
    const list = this.list(id);
    requireVersion(list.version, ifMatch);
    const name = displayNameOf(body, false);
    if (name !== undefined) list.displayName = name;
    list.version = this.nextVersion();
    this.listJournal.put(list.id, list);
    return list;
  }

  deleteList(id: string, ifMatch?: string): void {
    const list = this.list(id);
    requireVersion(list.version, ifMatch);
    if (list.wellknownListName === 'defaultList')
      throw new GraphError(400, 'invalidRequest', 'The default task list cannot be deleted.');
    for (const task of list.tasks.values()) {
      this.deletedTaskIds.push(task.id);
      this.changed('deleted', task);
    }
    this.lists.delete(id);
    this.listJournal.remove(id);
  }

  task(listId: string, id: string): StoredTask {
    const list = this.list(listId);
    checkTaskId(id);
    const task = list.tasks.get(id);
    if (!task) throw graphErrors.notFound();
    return task;
  }

  /** A task by id in whichever list holds it (the control API names tasks without their list). */
  findTask(id: string): StoredTask {
    checkTaskId(id);
    for (const list of this.lists.values()) {
      const task = list.tasks.get(id);
      if (task) return task;
    }
    throw graphErrors.notFound();
  }

  createTask(listId: string, body: unknown): StoredTask {
    const list = this.list(listId);
    const now = this.now();
    const fields = applyTaskWrite(undefined, body, now, { create: true });
    const task: StoredTask = {
      id: newTaskId(),
      listId,
      created: now,
      version: this.nextVersion(),
      bodyModified: now,
      fields,
      checklist: new Map(),
      linked: new Map(),
      extensions: new Map(),
    };
    const inline = body as Record<string, unknown>;
    for (const item of arrayOf(inline.checklistItems)) {
      const written = writeChecklistItem(undefined, item, now);
      task.checklist.set(written.id, written);
    }
    for (const link of arrayOf(inline.linkedResources)) {
      const written = writeLinkedResource(link);
      task.linked.set(written.id, written);
    }
    for (const ext of arrayOf(inline.extensions)) {
      const written = writeExtension(ext);
      task.extensions.set(written.extensionName, written);
    }
    list.tasks.set(task.id, task);
    list.journal.put(task.id, task);
    this.changed('created', task);
    return task;
  }

  updateTask(listId: string, id: string, body: unknown, ifMatch?: string): StoredTask {
    const task = this.task(listId, id);
    requireVersion(task.version, ifMatch);
    const fields = applyTaskWrite(task.fields, body, this.now(), { create: false });
    const bodyChanged = JSON.stringify(fields.body) !== JSON.stringify(task.fields.body);
    task.fields = fields;
    return this.touch(task, bodyChanged);
  }

  deleteTask(listId: string, id: string, ifMatch?: string): void {
    const task = this.task(listId, id);
    requireVersion(task.version, ifMatch);
    const list = this.list(listId);
    list.tasks.delete(id);
    list.journal.remove(id);
    this.deletedTaskIds.push(id);
    this.changed('deleted', task);
  }

  writeChecklistItem(
    listId: string,
    taskId: string,
    itemId: string | undefined,
    body: unknown,
  ): ChecklistItem {
    const task = this.task(listId, taskId);
    const base = itemId === undefined ? undefined : this.child(task.checklist, itemId);
    const item = writeChecklistItem(base, body, this.now());
    task.checklist.set(item.id, item);
    this.touch(task);
    return item;
  }

  addLinkedResource(listId: string, taskId: string, body: unknown): LinkedResource {
    const task = this.task(listId, taskId);
    const link = writeLinkedResource(body);
    task.linked.set(link.id, link);
    this.touch(task);
    return link;
  }

  addExtension(listId: string, taskId: string, body: unknown): OpenExtension {
    const task = this.task(listId, taskId);
    const ext = writeExtension(body);
    if (task.extensions.has(ext.extensionName))
      throw new GraphError(
        409,
        'NameAlreadyExists',
        `An extension named '${ext.extensionName}' already exists.`,
      );
    task.extensions.set(ext.extensionName, ext);
    this.touch(task);
    return ext;
  }

  extension(listId: string, taskId: string, idOrName: string): OpenExtension {
    return this.child(this.task(listId, taskId).extensions, extensionKey(idOrName));
  }

  /** Removes a checklist item, linked resource or extension of a task. */
  deleteChild(listId: string, taskId: string, kind: 'checklist' | 'linked' | 'extensions', id: string): void {
    const task = this.task(listId, taskId);
    const key = kind === 'extensions' ? extensionKey(id) : id;
    this.child<unknown>(task[kind], key);
    task[kind].delete(key);
    this.touch(task);
  }

  /** One page of the task lists' delta round. */
  listDelta(
    token: DeltaToken | undefined,
    request: TodoDeltaRequest,
  ): { entries: DeltaEntry<StoredList>[]; next: DeltaToken } {
    return this.listJournal.page(token, { ...request, expand: asEntries<StoredList>() });
  }

  /** One page of a list's task delta round. */
  taskDelta(
    listId: string,
    token: DeltaToken | undefined,
    request: TodoDeltaRequest,
  ): { entries: DeltaEntry<StoredTask>[]; next: DeltaToken } {
    return this.list(listId).journal.page(token, { ...request, expand: asEntries<StoredTask>() });
  }

  /** Every To Do delta token issued so far is refused from now on. */
  invalidateDelta(expiry?: Expiry): void {
    this.listJournal.invalidate(expiry);
    for (const list of this.lists.values()) list.journal.invalidate(expiry);
  }

  snapshot(): { lists: StoredList[]; deletedListIds: string[]; deletedTaskIds: string[] } {
    return {
      lists: this.allLists(),
      deletedListIds: this.listJournal.removedIds(),
      deletedTaskIds: [...this.deletedTaskIds],
    };
  }

  private addList(displayName: string, wellknownListName: StoredList['wellknownListName']): StoredList {
    const list: StoredList = {
      id: newListId(),
      displayName,
      wellknownListName,
      version: this.nextVersion(),
      tasks: new Map(),
      journal: new DeltaJournal<StoredTask>(),
    };
    this.lists.set(list.id, list);
    this.listJournal.put(list.id, list);
    return list;
  }

  /** A new version of the task, seen by the next delta round. */
  private touch(task: StoredTask, bodyChanged = false): StoredTask {
    task.version = this.nextVersion();
    if (bodyChanged) task.bodyModified = task.version.modified;
    this.list(task.listId).journal.put(task.id, task);
    this.changed('updated', task);
    return task;
  }

  private changed(changeType: ChangeType, task: StoredTask): void {
    this.onChange({
      area: 'tasks',
      changeType,
      id: task.id,
      listId: task.listId,
      changeKey: task.version.key,
    });
  }

  private child<T>(map: Map<string, T>, id: string): T {
    const found = map.get(id);
    if (found === undefined) throw graphErrors.notFound();
    return found;
  }

  private nextVersion(): TodoVersion {
    return { key: newTodoVersionKey(), modified: this.now() };
  }
}

/** A live entry as itself, a removed one by id; the initial round has no removals. */
function asEntries<T>(): Expand<T, T> {
  return ({ id, item, removed, initial }) => {
    if (item) return [{ kind: 'item', id, item }];
    if (initial || !removed) return [];
    return [{ kind: 'removed', id, reason: removed }];
  };
}

function requireVersion(version: TodoVersion, ifMatch: string | undefined): void {
  const given = ifMatch?.trim();
  if (given === undefined || given === '*') return;
  if (given !== etagOf(version.key) && given !== `"${version.key}"` && given !== version.key)
    throw graphErrors.preconditionFailed();
}

function displayNameOf(body: unknown, required: boolean): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw graphErrors.badRequest('The request body must be a JSON object.');
  const { displayName, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest).find(
    (k) => !k.includes('@') && !['id', 'isOwner', 'isShared', 'wellknownListName'].includes(k),
  );
  if (unknown !== undefined)
    throw new GraphError(
      400,
      'RequestBodyRead',
      `The property '${unknown}' does not exist on type 'microsoft.graph.todoTaskList'.`,
    );
  if (displayName === undefined && !required) return undefined;
  if (typeof displayName !== 'string' || displayName.trim() === '')
    throw new GraphError(400, 'invalidRequest', 'The displayName of a task list is required.');
  return displayName;
}

function arrayOf(v: unknown): unknown[] {
  if (v == null) return [];
  if (!Array.isArray(v)) throw graphErrors.badRequest('An inline collection must be an array.');
  return v;
}
