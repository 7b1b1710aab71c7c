import { GraphError, graphErrors } from '../graph-errors';
import { isObject } from './calendar-event';

/**
 * singleValueExtendedProperties: MAPI properties a client sets on its own writes (how a
 * connector tags what it wrote). Kept by id; returned only when asked for by id through
 * `$expand=singleValueExtendedProperties($filter=id eq '…')`.
 */
export type ExtendedProperties = Map<string, { id: string; value: string }>;

const TYPES = [
  'String',
  'Integer',
  'Long',
  'Boolean',
  'Double',
  'Float',
  'Currency',
  'SystemTime',
  'Binary',
  'CLSID',
  'Short',
];
const NAMED =
  /^(\w+)\s+\{([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}\s+(Name|Id)\s+(\S.*)$/i;
const TAGGED = /^(\w+)\s+(0x[0-9a-f]{1,8})$/i;

/**
 * An extended property id in one spelling: the type and GUID are matched without case, the
 * name with it (as Exchange does).
 */
export function normalizePropertyId(raw: string): string {
  const trimmed = raw.trim();
  const named = NAMED.exec(trimmed);
  const tagged = named ? null : TAGGED.exec(trimmed);
  const type = TYPES.find((t) => t.toLowerCase() === (named?.[1] ?? tagged?.[1] ?? '').toLowerCase());
  if (named && type) {
    const kind = named[3]!.toLowerCase() === 'name' ? 'Name' : 'Id';
    return `${type} {${named[2]!.toLowerCase()}} ${kind} ${named[4]}`;
  }
  if (tagged && type) return `${type} ${tagged[2]!.toLowerCase()}`;
  throw new GraphError(400, 'ErrorInvalidProperty', `The extended property id '${raw}' is not valid.`);
}

/** Merges written properties into the event's, by id (Graph adds or replaces, never drops). */
export function writeExtendedProperties(target: ExtendedProperties, raw: unknown): void {
  if (raw == null) return;
  if (!Array.isArray(raw)) throw graphErrors.badRequest('singleValueExtendedProperties must be an array.');
  for (const entry of raw) {
    if (!isObject(entry) || typeof entry.id !== 'string' || typeof entry.value !== 'string')
      throw graphErrors.badRequest(
        'Each single-value extended property needs a string id and a string value.',
      );
    const id = normalizePropertyId(entry.id);
    target.set(id, { id, value: entry.value });
  }
}

/**
 * The extended property ids a `$expand` asks for. The emulator knows only the form Graph
 * documents for them: `singleValueExtendedProperties($filter=id eq '…' [or id eq '…'])`.
 */
export function parseExpand(expand: string | undefined): string[] | undefined {
  if (expand === undefined || expand.trim() === '') return undefined;
  const m = /^\s*singleValueExtendedProperties\s*\(\s*\$filter\s*=\s*(.+)\)\s*$/i.exec(expand);
  if (!m) throw graphErrors.badRequest(`The emulator does not support $expand=${expand}.`);
  return m[1]!.split(/\s+or\s+/i).map((clause) => {
    const id = /^\s*id\s+eq\s+'((?:[^']|'')*)'\s*$/i.exec(clause);
    if (!id) throw graphErrors.badRequest(`Invalid $filter in $expand: ${clause}`);
    return normalizePropertyId(id[1]!.replaceAll("''", "'"));
  });
}

/** The asked-for properties the event has, as Graph lists them (absent when none match). */
export function expandedProperties(
  props: ExtendedProperties,
  wanted: string[] | undefined,
): { id: string; value: string }[] | undefined {
  if (wanted === undefined) return undefined;
  const found = wanted.map((id) => props.get(id)).filter((p) => p !== undefined);
  return found.length === 0 ? undefined : found;
}
