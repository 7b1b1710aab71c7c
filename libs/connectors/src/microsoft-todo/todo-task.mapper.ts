import { err, ok, type Result, type SourceChangeInput } from '@syncline/core';
import type { ChangeScope, TaskFields } from '../shared/unified-records';

/**
 * To Do's tasks in the unified task fields (TaskFields, the set Google Tasks reports). To Do's
 * own statuses other than `completed` (notStarted, inProgress, waitingOnOthers, deferred) are
 * all `open`; importance has no unified field of its own here. To Do has no subtasks (checklist
 * items are steps), so `parentId` is always null.
 */
export type { ChangeScope, TaskFields };

/** Graph's dateTimeTimeZone: a wall time without offset, and the zone it is in. */
export interface DateTimeTimeZone {
  dateTime: string;
  timeZone?: string | null;
}

/** An open extension as Graph renders it (`extensionName` plus the app's own data). */
export interface OpenExtension {
  '@odata.type'?: string;
  id?: string;
  extensionName?: string;
  [key: string]: unknown;
}

/** A todoTask as Graph returns it (GET, POST, PATCH, delta), or a delta's `@removed` entry. */
export interface TodoTask {
  '@odata.etag'?: string;
  '@removed'?: { reason?: string };
  id: string;
  title?: string | null;
  body?: { content?: string | null; contentType?: string | null } | null;
  status?: string | null;
  importance?: string | null;
  dueDateTime?: DateTimeTimeZone | null;
  completedDateTime?: DateTimeTimeZone | null;
  createdDateTime?: string | null;
  lastModifiedDateTime?: string | null;
  extensions?: OpenExtension[];
}

/** A todoTaskList as Graph returns it, or a lists delta's `@removed` entry. */
export interface TodoTaskList {
  '@odata.etag'?: string;
  '@removed'?: { reason?: string };
  id: string;
  displayName?: string;
  wellknownListName?: string;
}

/** A page of a collection or a delta round: items, then a nextLink or (last) a deltaLink. */
export interface GraphPage<T> {
  value?: T[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

/** What a create or PATCH sends: only the fields written. */
export interface TodoTaskWrite {
  title?: string;
  body?: { contentType: 'text'; content: string };
  status?: 'notStarted' | 'completed';
  dueDateTime?: DateTimeTimeZone | null;
}

/**
 * Our open extension on every task we create: the write's idempotency key (a retried create
 * finds it instead of creating again) and our entity id (the origin tag).
 */
export const ORIGIN_EXTENSION = 'com.syncline.origin';

export const originExtension = (idempotencyKey: string, entityId: string): OpenExtension => ({
  '@odata.type': 'microsoft.graph.openTypeExtension',
  extensionName: ORIGIN_EXTENSION,
  idempotencyKey,
  entityId,
});

/** Our origin extension's data on a task read with `$expand=extensions`, if it carries one. */
export function originOf(task: TodoTask): { idempotencyKey: string; entityId?: string } | undefined {
  const ext = task.extensions?.find(
    (e) => e.extensionName === ORIGIN_EXTENSION || e.id?.endsWith(`.${ORIGIN_EXTENSION}`),
  );
  if (!ext || typeof ext.idempotencyKey !== 'string') return undefined;
  return {
    idempotencyKey: ext.idempotencyKey,
    ...(typeof ext.entityId === 'string' ? { entityId: ext.entityId } : {}),
  };
}

/** `<list id>/<task id>`: every call on a task names its list. */
export const taskExternalId = (listId: string, taskId: string): string => `${listId}/${taskId}`;

export function splitExternalId(externalId: string): { listId: string; taskId: string } | undefined {
  const at = externalId.indexOf('/');
  if (at <= 0 || at === externalId.length - 1) return undefined;
  return { listId: externalId.slice(0, at), taskId: externalId.slice(at + 1) };
}

const DAY_MS = 86_400_000;
const WALL = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}))?/;
const UTC_ZONES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'z', 'coordinated universal time']);

/**
 * A To Do date (due, completed) as the unified time: midnight UTC of the date, as Google Tasks
 * keeps its due dates. To Do stores dates without a time, as midnight of the zone they were
 * set in; Graph may show that midnight converted to UTC, where a zone east of UTC lands on the
 * afternoon before and one west of it on the morning of the date. So a UTC time from noon on
 * is the next day's date (exact for zones from UTC-11 to UTC+12); a time in any other zone is
 * that zone's own date. Unreadable values are kept as they are.
 */
export function toUnifiedDate(value: DateTimeTimeZone | null | undefined): string | null {
  if (!value?.dateTime) return null;
  const m = WALL.exec(value.dateTime);
  if (!m) return value.dateTime;
  const day = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (Number.isNaN(day)) return value.dateTime;
  const zone = (value.timeZone ?? 'UTC').trim().toLowerCase();
  const nextDay = (zone === '' || UTC_ZONES.has(zone)) && Number(m[4] ?? 0) >= 12;
  return new Date(day + (nextDay ? DAY_MS : 0)).toISOString();
}

/** A unified time (or date) as To Do's date: its UTC date at midnight; undefined when unreadable. */
export function toTodoDate(value: unknown): DateTimeTimeZone | undefined {
  const at = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) return undefined;
  return { dateTime: `${at.toISOString().slice(0, 10)}T00:00:00.0000000`, timeZone: 'UTC' };
}

export function toTaskFields(task: TodoTask, listId: string): TaskFields {
  return {
    title: task.title ? task.title : null,
    notes: task.body?.content ? task.body.content : null,
    status: task.status === 'completed' ? 'completed' : 'open',
    dueAt: toUnifiedDate(task.dueDateTime),
    completedAt: toUnifiedDate(task.completedDateTime),
    listId,
    parentId: null,
  };
}

/**
 * One key per task version: its etag (a new one on every change, the same whichever round
 * reads it, a full resync's too); a removed task's key is its last, as it cannot come back.
 */
export function taskEventKey(task: TodoTask): string {
  if (task['@removed']) return `${task.id}:removed`;
  return `${task.id}:${task['@odata.etag'] ?? task.lastModifiedDateTime ?? '0'}`;
}

export function toTaskChange(
  task: TodoTask,
  listId: string,
  scope: ChangeScope,
  receivedAt: Date,
): SourceChangeInput {
  const modified = task.lastModifiedDateTime ? new Date(task.lastModifiedDateTime) : undefined;
  const eventTime = modified && !Number.isNaN(modified.getTime()) ? modified : receivedAt;
  const common = {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'task' as const,
    externalId: taskExternalId(listId, task.id),
    eventKey: taskEventKey(task),
    eventTime,
  };
  if (task['@removed']) return { ...common, op: 'delete', fields: {} };
  const fields = toTaskFields(task, listId);
  return {
    ...common,
    ...(task['@odata.etag'] ? { providerVersion: task['@odata.etag'] } : {}),
    op: 'upsert',
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
  };
}

/**
 * Unified fields → a task body, only the fields present (`null` clears). `listId`,
 * `completedAt` and `parentId` are not written: To Do stamps the completion date itself and
 * moves no task between lists. `open` is written as notStarted.
 */
export function toTodoTask(fields: Readonly<Record<string, unknown>>): Result<TodoTaskWrite, string> {
  const out: TodoTaskWrite = {};
  const has = (k: string) => Object.hasOwn(fields, k) && fields[k] !== undefined;
  if (has('title')) out.title = fields.title === null ? '' : String(fields.title);
  if (has('notes'))
    out.body = { contentType: 'text', content: fields.notes === null ? '' : String(fields.notes) };
  if (has('status')) out.status = fields.status === 'completed' ? 'completed' : 'notStarted';
  if (has('dueAt')) {
    if (fields.dueAt === null) out.dueDateTime = null;
    else {
      const due = toTodoDate(fields.dueAt);
      if (!due) return err(`dueAt is not a time: ${String(fields.dueAt)}`);
      out.dueDateTime = due;
    }
  }
  return ok(out);
}
