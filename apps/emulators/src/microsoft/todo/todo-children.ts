import { randomUUID } from 'node:crypto';
import { isObject, type Json } from '../calendar/calendar-event';
import { formatInstant } from '../calendar/time-zones';
import { GraphError } from '../graph-errors';

/** A step of a task. */
export interface ChecklistItem {
  id: string;
  displayName: string;
  isChecked: boolean;
  created: number;
  checked: number | null;
}

/** A link from a task to the record it came from (how an app says "this task is mine"). */
export interface LinkedResource {
  id: string;
  webUrl: string | null;
  applicationName: string | null;
  displayName: string | null;
  externalId: string | null;
}

/** An open extension: a name and whatever the app stored under it. */
export interface OpenExtension {
  extensionName: string;
  data: Json;
}

const EXTENSION_ID_PREFIX = 'Microsoft.OutlookServices.OpenTypeExtension.';

/** A checklist item created or PATCHed; checking it stamps checkedDateTime. */
export function writeChecklistItem(
  base: ChecklistItem | undefined,
  body: unknown,
  now: number,
): ChecklistItem {
  const v = objectBody(body, 'checklistItem', [
    'displayName',
    'isChecked',
    'checkedDateTime',
    'createdDateTime',
  ]);
  if (!base && typeof v.displayName !== 'string')
    throw new GraphError(400, 'invalidRequest', 'The displayName of a checklist item is required.');
  const item: ChecklistItem = base
    ? { ...base }
    : { id: randomUUID(), displayName: '', isChecked: false, created: now, checked: null };
  if ('displayName' in v) item.displayName = str('displayName', v.displayName);
  if ('isChecked' in v) {
    if (typeof v.isChecked !== 'boolean') throw invalid('isChecked', 'true or false');
    if (v.isChecked && !item.isChecked) item.checked = now;
    if (!v.isChecked) item.checked = null;
    item.isChecked = v.isChecked;
  }
  return item;
}

export function writeLinkedResource(body: unknown): LinkedResource {
  const v = objectBody(body, 'linkedResource', ['webUrl', 'applicationName', 'displayName', 'externalId']);
  const opt = (name: string) => (v[name] == null ? null : str(name, v[name]));
  return {
    id: randomUUID(),
    webUrl: opt('webUrl'),
    applicationName: opt('applicationName'),
    displayName: opt('displayName'),
    externalId: opt('externalId'),
  };
}

/** `{ "@odata.type": "microsoft.graph.openTypeExtension", extensionName, …data }`. */
export function writeExtension(body: unknown): OpenExtension {
  if (!isObject(body)) throw new GraphError(400, 'BadRequest', 'The request body must be a JSON object.');
  const type = body['@odata.type'];
  if (
    typeof type !== 'string' ||
    type.replace(/^#/, '').toLowerCase() !== 'microsoft.graph.opentypeextension'
  )
    throw new GraphError(
      400,
      'BadRequest',
      "An extension needs '@odata.type': 'microsoft.graph.openTypeExtension'.",
    );
  if (typeof body.extensionName !== 'string' || body.extensionName === '')
    throw new GraphError(400, 'BadRequest', 'The extensionName of an extension is required.');
  const data: Json = {};
  for (const [key, value] of Object.entries(body))
    if (!key.startsWith('@') && key !== 'extensionName' && key !== 'id') data[key] = value;
  return { extensionName: body.extensionName, data };
}

/** An extension's id as Outlook names it; a request may name it by either. */
export const extensionKey = (idOrName: string): string =>
  idOrName.startsWith(EXTENSION_ID_PREFIX) ? idOrName.slice(EXTENSION_ID_PREFIX.length) : idOrName;

export function renderExtension(ext: OpenExtension): Json {
  return {
    '@odata.type': '#microsoft.graph.openTypeExtension',
    id: EXTENSION_ID_PREFIX + ext.extensionName,
    extensionName: ext.extensionName,
    ...ext.data,
  };
}

export function renderChecklistItem(item: ChecklistItem): Json {
  return {
    displayName: item.displayName,
    createdDateTime: formatInstant(item.created),
    ...(item.checked === null ? {} : { checkedDateTime: formatInstant(item.checked) }),
    isChecked: item.isChecked,
    id: item.id,
  };
}

export function renderLinkedResource(link: LinkedResource): Json {
  return {
    applicationName: link.applicationName,
    displayName: link.displayName,
    externalId: link.externalId,
    webUrl: link.webUrl,
    id: link.id,
  };
}

function objectBody(body: unknown, type: string, allowed: string[]): Json {
  if (!isObject(body)) throw new GraphError(400, 'BadRequest', 'The request body must be a JSON object.');
  for (const key of Object.keys(body))
    if (!key.includes('@') && key !== 'id' && !allowed.includes(key))
      throw new GraphError(
        400,
        'RequestBodyRead',
        `The property '${key}' does not exist on type 'microsoft.graph.${type}'.`,
      );
  return body;
}

function str(name: string, v: unknown): string {
  if (typeof v !== 'string') throw invalid(name, 'a string');
  return v;
}

const invalid = (name: string, what: string): GraphError =>
  new GraphError(400, 'invalidRequest', `Invalid value for property '${name}': ${what} is expected.`);
