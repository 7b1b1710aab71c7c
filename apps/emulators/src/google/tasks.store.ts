import { isPlainObject, type JsonObject } from './calendar-event';
import { googleErrors } from './google-errors';
import { isoMs, type SeededRandom } from './google-ids';
import { parseRfc3339 } from './query-params';

export interface TaskResource {
  kind: 'tasks#task';
  id: string;
  etag: string;
  title: string;
  updated: string;
  selfLink: string;
  parent?: string;
  position: string;
  notes?: string;
  status: 'needsAction' | 'completed';
  due?: string;
  completed?: string;
  deleted?: boolean;
  hidden?: boolean;
  links: { type: string; description?: string; link: string }[];
}

export interface TaskListResource {
  kind: 'tasks#taskList';
  id: string;
  etag: string;
  title: string;
  updated: string;
  selfLink: string;
}

export interface TaskListQuery {
  maxResults: number;
  updatedMin?: number;
  showCompleted: boolean;
  showDeleted: boolean;
  showHidden: boolean;
  completedMin?: number;
  completedMax?: number;
  dueMin?: number;
  dueMax?: number;
}

export interface TasksPage {
  kind: 'tasks#tasks';
  etag: string;
  items?: TaskResource[];
  nextPageToken?: string;
}

interface StoredTask {
  listId: string;
  task: TaskResource;
}

interface TaskListing {
  ids: string[];
  offset: number;
  maxResults: number;
}

/** Who is writing: the Tasks UI hides tasks it completes, which the API does not. */
export type TaskWriter = 'api' | 'ui';

const TASKS_BASE = 'https://www.googleapis.com/tasks/v1';

/**
 * One user's task lists. There are no sync tokens in Tasks: clients poll with updatedMin,
 * and deletions are only visible with showDeleted=true.
 */
export class TasksStore {
  readonly defaultListId: string;
  private readonly lists = new Map<string, TaskListResource>();
  private readonly tasks = new Map<string, StoredTask>();
  private readonly pages = new Map<string, TaskListing>();
  private nextPosition = 0;

  constructor(
    readonly email: string,
    private readonly deps: { rng: SeededRandom; now: () => number },
  ) {
    this.defaultListId = this.insertList({ title: 'My Tasks' }).id;
  }

  resolveListId(listId: string): string {
    const id = listId === '@default' ? this.defaultListId : listId;
    if (!this.lists.has(id)) throw googleErrors.notFound('Task list not found.');
    return id;
  }

  listLists(): { kind: 'tasks#taskLists'; etag: string; items: TaskListResource[] } {
    const items = [...this.lists.values()];
    return { kind: 'tasks#taskLists', etag: items[0]?.etag ?? '""', items };
  }

  getList(listId: string): TaskListResource {
    return this.lists.get(this.resolveListId(listId)) as TaskListResource;
  }

  insertList(body: unknown): TaskListResource {
    const title = isPlainObject(body) && typeof body.title === 'string' ? body.title : '';
    const id = this.deps.rng.base64url(22);
    const list: TaskListResource = {
      kind: 'tasks#taskList',
      id,
      etag: this.etag(),
      title,
      updated: isoMs(this.deps.now()),
      selfLink: `${TASKS_BASE}/users/@me/lists/${id}`,
    };
    this.lists.set(id, list);
    return list;
  }

  list(listId: string, query: TaskListQuery, pageToken: string | undefined): TasksPage {
    const list = this.getList(listId);
    let listing: TaskListing;
    if (pageToken !== undefined) {
      const saved = this.pages.get(pageToken);
      if (!saved) throw googleErrors.invalid('Invalid page token.', 'pageToken');
      listing = saved;
    } else {
      const ids = [...this.tasks.values()]
        .filter((s) => s.listId === list.id && matches(s.task, query))
        .sort((a, b) => (a.task.position < b.task.position ? -1 : 1))
        .map((s) => s.task.id);
      listing = { ids, offset: 0, maxResults: query.maxResults };
    }
    const items = listing.ids.slice(listing.offset, listing.offset + listing.maxResults).flatMap((id) => {
      const stored = this.tasks.get(id);
      return stored ? [stored.task] : [];
    });
    const offset = listing.offset + listing.maxResults;
    const page: TasksPage = { kind: 'tasks#tasks', etag: list.etag };
    if (items.length > 0) page.items = items;
    if (offset < listing.ids.length) {
      const token = this.deps.rng.base64url(32);
      this.pages.set(token, { ...listing, offset });
      page.nextPageToken = token;
    }
    return page;
  }

  get(listId: string, taskId: string): TaskResource {
    return this.require(this.resolveListId(listId), taskId).task;
  }

  insert(listId: string, body: unknown, opts: { parent?: string; writer?: TaskWriter } = {}): TaskResource {
    const resolved = this.resolveListId(listId);
    if (opts.parent !== undefined) this.require(resolved, opts.parent);
    const id = this.deps.rng.base64url(22);
    const now = this.deps.now();
    const base: TaskResource = {
      kind: 'tasks#task',
      id,
      etag: '',
      title: '',
      updated: isoMs(now),
      selfLink: `${TASKS_BASE}/lists/${resolved}/tasks/${id}`,
      ...(opts.parent ? { parent: opts.parent } : {}),
      position: String(this.nextPosition++).padStart(20, '0'),
      status: 'needsAction',
      links: [],
    };
    const task = this.applyFields(base, requireObject(body), opts.writer ?? 'api', now);
    this.tasks.set(id, { listId: resolved, task });
    this.touchList(resolved, now);
    return task;
  }

  patch(listId: string, taskId: string, body: unknown, writer: TaskWriter = 'api'): TaskResource {
    const stored = this.require(this.resolveListId(listId), taskId);
    return this.write(stored, this.applyFields(stored.task, requireObject(body), writer, this.deps.now()));
  }

  update(listId: string, taskId: string, body: unknown): TaskResource {
    const stored = this.require(this.resolveListId(listId), taskId);
    const { notes: _notes, due: _due, completed: _completed, ...kept } = stored.task;
    const reset: TaskResource = { ...kept, status: 'needsAction' };
    return this.write(stored, this.applyFields(reset, requireObject(body), 'api', this.deps.now()));
  }

  /** Deleted tasks stay, flagged, for showDeleted; their subtasks go with them. */
  delete(listId: string, taskId: string): void {
    const resolved = this.resolveListId(listId);
    const stored = this.require(resolved, taskId);
    const now = this.deps.now();
    for (const child of this.tasks.values()) {
      if (child.task.parent === taskId && !child.task.deleted)
        this.write(child, { ...child.task, deleted: true }, now);
    }
    if (!stored.task.deleted) this.write(stored, { ...stored.task, deleted: true }, now);
  }

  /** tasks.clear: completed tasks become hidden (not deleted). */
  clearCompleted(listId: string): void {
    const resolved = this.resolveListId(listId);
    for (const stored of this.tasks.values()) {
      if (stored.listId === resolved && stored.task.status === 'completed' && !stored.task.hidden) {
        this.write(stored, { ...stored.task, hidden: true });
      }
    }
  }

  /** The list a task is in, for the control API's list-less task routes. */
  listOf(taskId: string): string {
    const stored = this.tasks.get(taskId);
    if (!stored) throw googleErrors.notFound('Task not found.');
    return stored.listId;
  }

  snapshot(): (TaskResource & { tasklist: string })[] {
    return [...this.tasks.values()].map((s) => ({ ...s.task, tasklist: s.listId }));
  }

  private write(stored: StoredTask, task: TaskResource, now = this.deps.now()): TaskResource {
    stored.task = { ...task, updated: isoMs(now), etag: this.etag() };
    this.touchList(stored.listId, now);
    return stored.task;
  }

  private applyFields(
    current: TaskResource,
    body: JsonObject,
    writer: TaskWriter,
    now: number,
  ): TaskResource {
    const next: TaskResource = { ...current, etag: this.etag(), updated: isoMs(now) };
    if (body.title !== undefined) next.title = requireString(body.title, 'title');
    if (body.notes !== undefined) {
      if (body.notes === null) delete next.notes;
      else next.notes = requireString(body.notes, 'notes');
    }
    if (body.due !== undefined) {
      if (body.due === null) delete next.due;
      else next.due = dueDate(requireString(body.due, 'due'));
    }
    if (body.deleted !== undefined) next.deleted = body.deleted === true;
    if (body.status !== undefined) {
      if (body.status !== 'needsAction' && body.status !== 'completed')
        throw googleErrors.invalid('Invalid task status.');
      if (body.status === 'completed' && current.status !== 'completed') {
        next.status = 'completed';
        next.completed =
          typeof body.completed === 'string' && parseRfc3339(body.completed) !== undefined
            ? isoMs(parseRfc3339(body.completed) as number)
            : isoMs(now);
        // Tasks completed in Google's own apps come back hidden: clients need showHidden=true.
        if (writer === 'ui') next.hidden = true;
      } else if (body.status === 'needsAction') {
        next.status = 'needsAction';
        delete next.completed;
        delete next.hidden;
      }
    }
    if (writer === 'ui' && typeof body.hidden === 'boolean') next.hidden = body.hidden;
    if (next.deleted === false) delete next.deleted;
    return next;
  }

  private require(listId: string, taskId: string): StoredTask {
    const stored = this.tasks.get(taskId);
    if (!stored || stored.listId !== listId) throw googleErrors.notFound('Task not found.');
    return stored;
  }

  private touchList(listId: string, now: number): void {
    const list = this.lists.get(listId);
    if (list) this.lists.set(listId, { ...list, updated: isoMs(now), etag: this.etag() });
  }

  private etag(): string {
    return `"${this.deps.rng.base64url(16)}"`;
  }
}

function matches(task: TaskResource, q: TaskListQuery): boolean {
  if (task.deleted && !q.showDeleted) return false;
  if (task.hidden && !q.showHidden) return false;
  if (task.status === 'completed' && !q.showCompleted) return false;
  if (q.updatedMin !== undefined && Date.parse(task.updated) < q.updatedMin) return false;
  const completed = task.completed === undefined ? undefined : Date.parse(task.completed);
  if (q.completedMin !== undefined && (completed === undefined || completed < q.completedMin)) return false;
  if (q.completedMax !== undefined && (completed === undefined || completed > q.completedMax)) return false;
  const due = task.due === undefined ? undefined : Date.parse(task.due);
  if (q.dueMin !== undefined && (due === undefined || due < q.dueMin)) return false;
  if (q.dueMax !== undefined && (due === undefined || due > q.dueMax)) return false;
  return true;
}

function requireObject(body: unknown): JsonObject {
  if (!isPlainObject(body)) throw googleErrors.parseError('The request body must be a JSON object.');
  return body;
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw googleErrors.invalid(`Invalid value for: ${field}`);
  return value;
}

/** Tasks keeps only the date of `due`; the time of day is discarded. */
function dueDate(raw: string): string {
  const ms = parseRfc3339(raw) ?? (/^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(raw) : undefined);
  if (ms === undefined || Number.isNaN(ms)) throw googleErrors.invalid('Invalid value for: due');
  return `${new Date(ms).toISOString().slice(0, 10)}T00:00:00.000Z`;
}
