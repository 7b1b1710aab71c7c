import { isObject } from '../calendar/calendar-event';
import { instantToWall, requireZone, wallMs, wallToInstant } from '../calendar/time-zones';
import { GraphError } from '../graph-errors';

export const TASK_STATUS = ['notStarted', 'inProgress', 'completed', 'waitingOnOthers', 'deferred'] as const;
export const TASK_IMPORTANCE = ['low', 'normal', 'high'] as const;

/** Everything a client may write on a task; times are instants, shown in UTC. */
export interface TaskFields {
  title: string;
  body: { contentType: 'text' | 'html'; content: string };
  status: (typeof TASK_STATUS)[number];
  importance: (typeof TASK_IMPORTANCE)[number];
  isReminderOn: boolean;
  categories: string[];
  due: number | null;
  start: number | null;
  reminder: number | null;
  completed: number | null;
}

/** Properties Graph computes: a client echoing them back is ignored, not refused. */
const READ_ONLY = new Set([
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'bodyLastModifiedDateTime',
  'hasAttachments',
]);

/** Navigation properties a create may carry inline (the store keeps them beside the fields). */
export const INLINE_ON_CREATE = ['checklistItems', 'linkedResources', 'extensions'] as const;

const DAY_MS = 86_400_000;

/**
 * Applies a create or PATCH body to a task's fields (a PATCH replaces what it names). Unknown
 * properties and values outside an enum are refused as Graph refuses them. Completing a task
 * stamps completedDateTime (today, unless the body gives it); leaving `completed` clears it.
 */
export function applyTaskWrite(
  base: TaskFields | undefined,
  body: unknown,
  now: number,
  { create }: { create: boolean },
): TaskFields {
  if (!isObject(body)) throw new GraphError(400, 'BadRequest', 'The request body must be a JSON object.');
  for (const key of Object.keys(body)) {
    if (key.includes('@') || READ_ONLY.has(key) || key in WRITERS) continue;
    if (create && (INLINE_ON_CREATE as readonly string[]).includes(key)) continue;
    throw new GraphError(
      400,
      'RequestBodyRead',
      `The property '${key}' does not exist on type 'microsoft.graph.todoTask'. Make sure to only use property names that are defined by the type or mark the type as open type.`,
    );
  }
  if (create && typeof body.title !== 'string')
    throw new GraphError(400, 'invalidRequest', 'The title of a task is required.');
  const fields: TaskFields = base ? structuredClone(base) : defaults();
  for (const [key, write] of Object.entries(WRITERS)) if (key in body) write(fields, body[key]);
  if (fields.status !== 'completed') fields.completed = null;
  else if (!('completedDateTime' in body) && base?.status !== 'completed') fields.completed = dayOf(now);
  else if (fields.completed === null) fields.completed = dayOf(now);
  return fields;
}

type Writer = (fields: TaskFields, value: unknown) => void;

const WRITERS: Record<string, Writer> = {
  title: (f, v) => {
    f.title = v == null ? '' : str('title', v);
  },
  body: (f, v) => {
    if (v == null) {
      f.body = { contentType: 'text', content: '' };
      return;
    }
    if (!isObject(v)) throw invalid('body', 'an itemBody object is expected.');
    const type = v.contentType == null ? 'text' : str('body.contentType', v.contentType).toLowerCase();
    if (type !== 'text' && type !== 'html') throw literal(String(v.contentType), 'bodyType');
    f.body = { contentType: type, content: v.content == null ? '' : str('body.content', v.content) };
  },
  status: (f, v) => {
    f.status = member(v, TASK_STATUS, 'taskStatus');
  },
  importance: (f, v) => {
    f.importance = member(v, TASK_IMPORTANCE, 'importance');
  },
  isReminderOn: (f, v) => {
    if (typeof v !== 'boolean') throw invalid('isReminderOn', 'true or false.');
    f.isReminderOn = v;
  },
  categories: (f, v) => {
    if (v != null && !Array.isArray(v)) throw invalid('categories', 'an array of strings is expected.');
    f.categories = (v ?? []).map((c: unknown) => str('categories', c));
  },
  dueDateTime: (f, v) => {
    f.due = v == null ? null : dayOf(zonedInstant('dueDateTime', v), zoneOf(v));
  },
  completedDateTime: (f, v) => {
    f.completed = v == null ? null : dayOf(zonedInstant('completedDateTime', v), zoneOf(v));
  },
  startDateTime: (f, v) => {
    f.start = v == null ? null : zonedInstant('startDateTime', v);
  },
  reminderDateTime: (f, v) => {
    f.reminder = v == null ? null : zonedInstant('reminderDateTime', v);
  },
  recurrence: (_f, v) => {
    if (v != null)
      throw new GraphError(400, 'BadRequest', 'The emulator does not support recurring To Do tasks.');
  },
};

function defaults(): TaskFields {
  return {
    title: '',
    body: { contentType: 'text', content: '' },
    status: 'notStarted',
    importance: 'normal',
    isReminderOn: false,
    categories: [],
    due: null,
    start: null,
    reminder: null,
    completed: null,
  };
}

/** An enum member, matched without case as OData matches it; anything else is Graph's 400. */
function member<T extends string>(v: unknown, values: readonly T[], type: string): T {
  const found = values.find((m) => typeof v === 'string' && m.toLowerCase() === v.toLowerCase());
  if (!found) throw literal(String(v), type);
  return found;
}

const literal = (value: string, type: string): GraphError =>
  new GraphError(
    400,
    'BadRequest',
    `Cannot convert the literal '${value}' to the expected type 'microsoft.graph.${type}'.`,
  );

/** The instant a dateTimeTimeZone stands for; Graph's dateTime has no offset. */
function zonedInstant(name: string, v: unknown): number {
  if (!isObject(v) || typeof v.dateTime !== 'string')
    throw invalid(name, 'a dateTimeTimeZone with a dateTime is expected.');
  const wall = wallMs(v.dateTime.replace(/Z$/i, ''));
  if (wall === undefined) throw invalid(`${name}.dateTime`, `'${v.dateTime}' is not a date and time.`);
  return wallToInstant(wall, requireZone(zoneOf(v)));
}

const zoneOf = (v: unknown): string =>
  isObject(v) && typeof v.timeZone === 'string' && v.timeZone !== '' ? v.timeZone : 'UTC';

/**
 * To Do keeps due and completion dates without their time: midnight of the date, in the
 * zone it was given in, shown in UTC (microsoftgraph/microsoft-graph-docs#16991; the
 * conversion of another zone's midnight is assumed).
 */
function dayOf(instant: number, timeZone = 'UTC'): number {
  const zone = requireZone(timeZone);
  const wall = instantToWall(instant, zone);
  return wallToInstant(wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS), zone);
}

function str(name: string, v: unknown): string {
  if (typeof v !== 'string') throw invalid(name, 'a string is expected.');
  return v;
}

const invalid = (name: string, why: string): GraphError =>
  new GraphError(400, 'invalidRequest', `Invalid value for property '${name}': ${why}`);
