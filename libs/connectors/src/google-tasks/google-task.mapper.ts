import { createHash } from 'node:crypto';
import type { SourceChangeInput } from '@syncline/core';
import type { tasks_v1 } from 'googleapis/build/src/apis/tasks';
import type { ChangeScope, TaskFields } from '../shared/unified-records';

export type { ChangeScope, TaskFields };

type GoogleTask = tasks_v1.Schema$Task;

/**
 * Tasks has no client-chosen ids and no private properties, so a task we create carries a
 * marker at the end of its notes: `[syncline:<hash of the idempotency key>]`. A retried create
 * finds it and does not insert again.
 */
const MARKER = /\s*\[syncline:([0-9a-v]{8,64})\]\s*$/;

export const markerFor = (idempotencyKey: string): string =>
  createHash('sha256').update(`syncline:${idempotencyKey}`).digest('hex').slice(0, 24);

export function markerOf(notes: string | null | undefined): string | undefined {
  return notes ? MARKER.exec(notes)?.[1] : undefined;
}

export const stripMarker = (notes: string | null | undefined): string | null => {
  if (!notes) return null;
  const stripped = notes.replace(MARKER, '');
  return stripped === '' ? null : stripped;
};

export const withMarker = (notes: string | null | undefined, marker: string): string =>
  notes ? `${notes}\n\n[syncline:${marker}]` : `[syncline:${marker}]`;

/** `<list id>/<task id>`: every call on a task needs its list. */
export const taskExternalId = (listId: string, taskId: string): string => `${listId}/${taskId}`;

export function splitExternalId(externalId: string): { listId: string; taskId: string } | undefined {
  const at = externalId.lastIndexOf('/');
  if (at <= 0 || at === externalId.length - 1) return undefined;
  return { listId: externalId.slice(0, at), taskId: externalId.slice(at + 1) };
}

/** The list a task lives in, from its selfLink (`…/lists/<list>/tasks/<task>`). */
export function listIdFromSelfLink(selfLink: string | null | undefined): string | undefined {
  return selfLink ? /\/lists\/([^/]+)\/tasks\/[^/]+$/.exec(selfLink)?.[1] : undefined;
}

/** A provider time as the unified ISO UTC string (with milliseconds); unparseable kept as is. */
const isoOrNull = (value: string | null | undefined): string | null => {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
};

export function toTaskFields(task: GoogleTask, listId: string): TaskFields {
  return {
    title: task.title ?? null,
    notes: stripMarker(task.notes),
    status: task.status === 'completed' ? 'completed' : 'open',
    dueAt: isoOrNull(task.due),
    completedAt: isoOrNull(task.completed),
    listId,
    parentId: task.parent ?? null,
  };
}

/** Same task version → same key, whichever pull (overlapping windows) reads it. */
export const taskEventKey = (task: Pick<GoogleTask, 'id' | 'updated' | 'deleted'>): string =>
  `${task.id}:${task.updated ?? '0'}${task.deleted ? ':deleted' : ''}`;

export function toTaskChange(
  task: GoogleTask,
  listId: string,
  scope: ChangeScope,
  receivedAt: Date,
): SourceChangeInput {
  if (!task.id) throw new Error('task without an id');
  const eventTime = task.updated ? new Date(task.updated) : receivedAt;
  const common = {
    workspaceId: scope.workspaceId,
    connectionId: scope.connectionId,
    entityType: 'task' as const,
    externalId: taskExternalId(listId, task.id),
    eventKey: taskEventKey(task),
    eventTime,
    ...(task.etag ? { providerVersion: task.etag } : {}),
  };
  if (task.deleted) return { ...common, op: 'delete', fields: {} };
  const fields = toTaskFields(task, listId);
  const marker = markerOf(task.notes);
  return {
    ...common,
    op: 'upsert',
    fields: { ...fields },
    fieldTimes: Object.fromEntries(Object.keys(fields).map((k) => [k, eventTime])),
    ...(marker ? { origin: { synclineMarker: marker } } : {}),
  };
}

/** Unified fields → a task body (only the fields present; `null` clears). */
export function toGoogleTask(fields: Readonly<Record<string, unknown>>): GoogleTask {
  const out: GoogleTask = {};
  const has = (k: string) => Object.hasOwn(fields, k) && fields[k] !== undefined;
  if (has('title')) out.title = fields.title === null ? null : String(fields.title);
  if (has('notes')) out.notes = fields.notes === null ? null : String(fields.notes);
  if (has('status')) out.status = fields.status === 'completed' ? 'completed' : 'needsAction';
  if (has('dueAt')) {
    const due = fields.dueAt;
    out.due = due === null ? null : new Date(due instanceof Date ? due : String(due)).toISOString();
  }
  return out;
}
