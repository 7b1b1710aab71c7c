import { randomBytes } from 'node:crypto';
import { graphErrors } from '../graph-errors';

/**
 * To Do ids as Graph shows them: lists like mailbox folders (`AAMkAD…`), tasks in the
 * immutable form Outlook items have (`AAkALgAA…`); checklist items and linked resources are
 * GUIDs. A well-formed id nobody has is a 404, anything else a 400, as Graph tells them apart.
 */
const LIST_PREFIX = 'AAMkAD';
const TASK_PREFIX = 'AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A';
const ID_BYTES = 33;
const ID_TAIL = /^[A-Za-z0-9_-]{44}$/;

export const newListId = (): string => LIST_PREFIX + randomBytes(ID_BYTES).toString('base64url');
export const newTaskId = (): string => TASK_PREFIX + randomBytes(ID_BYTES).toString('base64url');

export function checkListId(id: string): void {
  if (!id.startsWith(LIST_PREFIX) || !ID_TAIL.test(id.slice(LIST_PREFIX.length)))
    throw graphErrors.malformedId(id);
}

export function checkTaskId(id: string): void {
  if (!id.startsWith(TASK_PREFIX) || !ID_TAIL.test(id.slice(TASK_PREFIX.length)))
    throw graphErrors.malformedId(id);
}

/** A To Do version: `@odata.etag` is `W/"<key>"` (tasks have no changeKey property). */
export const newTodoVersionKey = (): string => randomBytes(22).toString('base64');
