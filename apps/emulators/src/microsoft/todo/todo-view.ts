import type { Json } from '../calendar/calendar-event';
import { etagOf } from '../calendar/event-ids';
import { formatInstant, formatWall } from '../calendar/time-zones';
import type { DeltaJournal } from '../delta';
import { graphErrors } from '../graph-errors';
import {
  type ChecklistItem,
  type LinkedResource,
  type OpenExtension,
  renderChecklistItem,
  renderExtension,
  renderLinkedResource,
} from './todo-children';
import type { TaskFields } from './todo-task';

export interface TodoVersion {
  key: string;
  modified: number;
}

export interface StoredTask {
  id: string;
  listId: string;
  created: number;
  version: TodoVersion;
  bodyModified: number;
  fields: TaskFields;
  checklist: Map<string, ChecklistItem>;
  linked: Map<string, LinkedResource>;
  extensions: Map<string, OpenExtension>;
}

export interface StoredList {
  id: string;
  displayName: string;
  wellknownListName: 'defaultList' | 'none';
  version: TodoVersion;
  /** Live tasks in creation order. */
  tasks: Map<string, StoredTask>;
  /** The list's change journal: task delta rounds read it. */
  journal: DeltaJournal<StoredTask>;
}

/** The navigation properties `$expand` may name on a task. */
export const TASK_EXPANSIONS = ['checklistItems', 'linkedResources', 'extensions'] as const;
export type TaskExpansion = (typeof TASK_EXPANSIONS)[number];

export function parseTaskExpand(raw: string | undefined): Set<TaskExpansion> {
  const out = new Set<TaskExpansion>();
  if (raw === undefined || raw.trim() === '') return out;
  for (const part of raw.split(',').map((s) => s.trim())) {
    const found = TASK_EXPANSIONS.find((e) => e.toLowerCase() === part.toLowerCase());
    if (!found)
      throw graphErrors.badRequest(
        `Could not find a navigation property named '${part}' on type 'microsoft.graph.todoTask'.`,
      );
    out.add(found);
  }
  return out;
}

/** The task as Graph returns it, in Graph's order; unset dates are left out, as Graph leaves them out. */
export function renderTask(task: StoredTask, expand: Set<TaskExpansion> = new Set()): Json {
  const f = task.fields;
  const day = (ms: number | null) =>
    ms === null ? undefined : { dateTime: formatWall(ms), timeZone: 'UTC' };
  const out: Json = {
    '@odata.etag': etagOf(task.version.key),
    importance: f.importance,
    isReminderOn: f.isReminderOn,
    status: f.status,
    title: f.title,
    createdDateTime: formatInstant(task.created),
    lastModifiedDateTime: formatInstant(task.version.modified),
    hasAttachments: false,
    categories: f.categories,
    id: task.id,
    body: { content: f.body.content, contentType: f.body.contentType },
    bodyLastModifiedDateTime: formatInstant(task.bodyModified),
  };
  for (const [name, value] of [
    ['completedDateTime', f.completed],
    ['dueDateTime', f.due],
    ['reminderDateTime', f.reminder],
    ['startDateTime', f.start],
  ] as const) {
    const rendered = day(value);
    if (rendered) out[name] = rendered;
  }
  if (expand.has('checklistItems'))
    out.checklistItems = [...task.checklist.values()].map(renderChecklistItem);
  if (expand.has('linkedResources'))
    out.linkedResources = [...task.linked.values()].map(renderLinkedResource);
  if (expand.has('extensions')) out.extensions = [...task.extensions.values()].map(renderExtension);
  return out;
}

export function renderList(list: StoredList): Json {
  return {
    '@odata.etag': etagOf(list.version.key),
    displayName: list.displayName,
    isOwner: true,
    isShared: false,
    wellknownListName: list.wellknownListName,
    id: list.id,
  };
}

/** `$select`: `@odata.etag` and `id` stay; a name the type does not have is refused. */
export function selectFields(
  rendered: Json,
  select: string[] | undefined,
  type: 'todoTask' | 'todoTaskList',
): Json {
  if (select === undefined) return rendered;
  const known = type === 'todoTask' ? TASK_PROPERTIES : LIST_PROPERTIES;
  const out: Json = { '@odata.etag': rendered['@odata.etag'], id: rendered.id };
  for (const name of select) {
    if (!known.has(name))
      throw graphErrors.badRequest(
        `Could not find a property named '${name}' on type 'microsoft.graph.${type}'.`,
      );
    if (name in rendered) out[name] = rendered[name];
  }
  for (const name of TASK_EXPANSIONS) if (name in rendered) out[name] = rendered[name];
  return out;
}

const TASK_PROPERTIES = new Set([
  'id',
  'body',
  'bodyLastModifiedDateTime',
  'categories',
  'completedDateTime',
  'createdDateTime',
  'dueDateTime',
  'hasAttachments',
  'importance',
  'isReminderOn',
  'lastModifiedDateTime',
  'recurrence',
  'reminderDateTime',
  'startDateTime',
  'status',
  'title',
]);

const LIST_PROPERTIES = new Set(['id', 'displayName', 'isOwner', 'isShared', 'wellknownListName']);
