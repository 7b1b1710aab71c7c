import { err, ok, type Result } from '@syncline/core';
import { isListed, type StoredRecord } from './record-store';

export const SEARCH_OPERATORS = [
  'EQ',
  'NEQ',
  'LT',
  'LTE',
  'GT',
  'GTE',
  'BETWEEN',
  'IN',
  'NOT_IN',
  'HAS_PROPERTY',
  'NOT_HAS_PROPERTY',
  'CONTAINS_TOKEN',
  'NOT_CONTAINS_TOKEN',
] as const;
export type SearchOperator = (typeof SEARCH_OPERATORS)[number];

export interface SearchFilter {
  propertyName: string;
  operator: SearchOperator;
  value?: string;
  highValue?: string;
  values?: string[];
}

export interface SearchSort {
  propertyName: string;
  direction: 'ASCENDING' | 'DESCENDING';
}

export interface SearchRequest {
  /** OR of groups, AND within a group; none = everything. */
  filterGroups: SearchFilter[][];
  sorts: SearchSort[];
  properties: string[];
  limit: number;
  /** An offset, as HubSpot's search cursors are. */
  after: number;
  query?: string;
}

/** HubSpot's documented limits on a search. */
export const SEARCH_LIMITS = {
  defaultLimit: 10,
  maxLimit: 200,
  maxFilterGroups: 5,
  maxFiltersPerGroup: 6,
  maxFilters: 18,
  /** Paging to or past this offset is a 400 (!). */
  maxResults: 10_000,
} as const;

export type SearchRequestError =
  | { code: 'INVALID'; message: string }
  | { code: 'PAST_RESULT_LIMIT'; after: number };

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;

/** Validates a search body the way HubSpot does, into a typed request. */
export function parseSearchRequest(body: unknown): Result<SearchRequest, SearchRequestError> {
  const invalid = (message: string) => err<SearchRequestError>({ code: 'INVALID', message });
  const input = (body ?? {}) as Record<string, unknown>;
  if (typeof input !== 'object' || Array.isArray(input))
    return invalid('Invalid input JSON: expected an object.');

  const rawGroups = input.filterGroups ?? [];
  if (!Array.isArray(rawGroups)) return invalid('filterGroups must be an array.');
  if (rawGroups.length > SEARCH_LIMITS.maxFilterGroups) {
    return invalid(
      `Too many filter groups: ${rawGroups.length}. The maximum is ${SEARCH_LIMITS.maxFilterGroups}.`,
    );
  }
  const filterGroups: SearchFilter[][] = [];
  let filterCount = 0;
  for (const rawGroup of rawGroups) {
    const rawFilters = (rawGroup as { filters?: unknown } | null)?.filters ?? [];
    if (!Array.isArray(rawFilters)) return invalid('filters must be an array.');
    if (rawFilters.length > SEARCH_LIMITS.maxFiltersPerGroup) {
      return invalid(
        `Too many filters in a filter group: ${rawFilters.length}. The maximum is ${SEARCH_LIMITS.maxFiltersPerGroup}.`,
      );
    }
    filterCount += rawFilters.length;
    const group: SearchFilter[] = [];
    for (const raw of rawFilters as Record<string, unknown>[]) {
      const propertyName = str(raw?.propertyName);
      const operator = str(raw?.operator ?? 'EQ') as SearchOperator;
      if (!propertyName) return invalid('A filter is missing its propertyName.');
      if (!SEARCH_OPERATORS.includes(operator)) return invalid(`Unknown filter operator: ${operator}.`);
      const filter: SearchFilter = { propertyName, operator };
      const value = str(raw.value);
      const highValue = str(raw.highValue);
      if (value !== undefined) filter.value = value;
      if (highValue !== undefined) filter.highValue = highValue;
      if (Array.isArray(raw.values)) filter.values = raw.values.map((v) => str(v) ?? '');
      const needs = needsOf(operator);
      if (needs === 'value' && filter.value === undefined)
        return invalid(`Filter ${propertyName} ${operator} needs a value.`);
      if (needs === 'range' && (filter.value === undefined || filter.highValue === undefined)) {
        return invalid(`Filter ${propertyName} BETWEEN needs value and highValue.`);
      }
      if (needs === 'values' && !filter.values)
        return invalid(`Filter ${propertyName} ${operator} needs values.`);
      group.push(filter);
    }
    filterGroups.push(group);
  }
  if (filterCount > SEARCH_LIMITS.maxFilters) {
    return invalid(
      `Too many filters: ${filterCount}. The maximum across all filter groups is ${SEARCH_LIMITS.maxFilters}.`,
    );
  }

  const sorts: SearchSort[] = [];
  for (const raw of (input.sorts ?? []) as unknown[]) {
    // HubSpot takes `{ propertyName, direction }`; the SDK's type is a string ("-createdate" = descending).
    if (typeof raw === 'string') {
      const desc = raw.startsWith('-');
      sorts.push({ propertyName: desc ? raw.slice(1) : raw, direction: desc ? 'DESCENDING' : 'ASCENDING' });
    } else if (raw && typeof raw === 'object' && typeof (raw as SearchSort).propertyName === 'string') {
      const { propertyName, direction } = raw as SearchSort;
      sorts.push({ propertyName, direction: direction === 'DESCENDING' ? 'DESCENDING' : 'ASCENDING' });
    } else return invalid('Invalid sort.');
  }

  const limit = input.limit === undefined ? SEARCH_LIMITS.defaultLimit : Number(input.limit);
  if (!Number.isInteger(limit) || limit < 0) return invalid(`Invalid limit: ${String(input.limit)}.`);
  if (limit > SEARCH_LIMITS.maxLimit) {
    return invalid(`limit must be less than or equal to ${SEARCH_LIMITS.maxLimit}, but was ${limit}.`);
  }
  const afterRaw = str(input.after);
  const after = afterRaw === undefined || afterRaw === '' ? 0 : Number(afterRaw);
  if (!Number.isInteger(after) || after < 0) return invalid(`Invalid after: ${afterRaw}.`);
  if (after >= SEARCH_LIMITS.maxResults) return err({ code: 'PAST_RESULT_LIMIT', after });

  const properties = Array.isArray(input.properties) ? input.properties.map((p) => String(p)) : [];
  const query = str(input.query);
  return ok({ filterGroups, sorts, properties, limit, after, ...(query ? { query } : {}) });
}

function needsOf(operator: SearchOperator): 'value' | 'range' | 'values' | 'none' {
  switch (operator) {
    case 'HAS_PROPERTY':
    case 'NOT_HAS_PROPERTY':
      return 'none';
    case 'BETWEEN':
      return 'range';
    case 'IN':
    case 'NOT_IN':
      return 'values';
    default:
      return 'value';
  }
}

export interface SearchPage {
  total: number;
  results: StoredRecord[];
  /** The offset of the next page, when there is one. */
  nextAfter?: string;
}

/** Runs a search over one type's records: archived and merged-away records never match. */
export function runSearch(
  records: Iterable<StoredRecord>,
  request: SearchRequest,
  queryProperties: readonly string[],
): SearchPage {
  const matches: StoredRecord[] = [];
  const query = request.query?.trim().toLowerCase();
  for (const record of records) {
    if (!isListed(record, false)) continue;
    if (
      request.filterGroups.length > 0 &&
      !request.filterGroups.some((g) => g.every((f) => matchesFilter(record, f)))
    ) {
      continue;
    }
    if (query && !queryProperties.some((p) => record.properties.get(p)?.toLowerCase().includes(query)))
      continue;
    matches.push(record);
  }
  const sorted = request.sorts.length > 0 ? sortBy(matches, request.sorts) : matches;
  const end = Math.min(request.after + request.limit, SEARCH_LIMITS.maxResults);
  const page: SearchPage = { total: sorted.length, results: sorted.slice(request.after, end) };
  if (end < matches.length) page.nextAfter = String(end);
  return page;
}

export function matchesFilter(record: StoredRecord, filter: SearchFilter): boolean {
  const actual = propertyValue(record, filter.propertyName);
  switch (filter.operator) {
    case 'HAS_PROPERTY':
      return actual !== undefined;
    case 'NOT_HAS_PROPERTY':
      return actual === undefined;
    case 'EQ':
      return actual !== undefined && equal(actual, filter.value ?? '');
    case 'NEQ':
      return actual === undefined || !equal(actual, filter.value ?? '');
    case 'IN':
      return actual !== undefined && (filter.values ?? []).some((v) => equal(actual, v));
    case 'NOT_IN':
      return actual === undefined || !(filter.values ?? []).some((v) => equal(actual, v));
    case 'LT':
      return actual !== undefined && compare(actual, filter.value ?? '') < 0;
    case 'LTE':
      return actual !== undefined && compare(actual, filter.value ?? '') <= 0;
    case 'GT':
      return actual !== undefined && compare(actual, filter.value ?? '') > 0;
    case 'GTE':
      return actual !== undefined && compare(actual, filter.value ?? '') >= 0;
    case 'BETWEEN':
      return (
        actual !== undefined &&
        compare(actual, filter.value ?? '') >= 0 &&
        compare(actual, filter.highValue ?? '') <= 0
      );
    case 'CONTAINS_TOKEN':
      return actual !== undefined && containsToken(actual, filter.value ?? '');
    case 'NOT_CONTAINS_TOKEN':
      return actual === undefined || !containsToken(actual, filter.value ?? '');
  }
}

function propertyValue(record: StoredRecord, name: string): string | undefined {
  return name === 'hs_object_id' || name === 'id' ? record.id : record.properties.get(name);
}

/**
 * Numbers compare as numbers and dates as epoch milliseconds, so a filter value of
 * "1700000000000" matches an ISO `lastmodifieddate`, as HubSpot's does.
 */
export function comparable(value: string): number | string {
  const trimmed = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  if (/^\d{4}-\d{2}-\d{2}/.test(trimmed)) {
    const t = Date.parse(trimmed);
    if (!Number.isNaN(t)) return t;
  }
  return trimmed.toLowerCase();
}

function compare(a: string, b: string): number {
  return compareComparable(comparable(a), comparable(b));
}

function compareComparable(x: number | string, y: number | string): number {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  const sx = String(x);
  const sy = String(y);
  return sx < sy ? -1 : sx > sy ? 1 : 0;
}

const equal = (a: string, b: string): boolean => compare(a, b) === 0;

/** Whole-token match, `*` as a wildcard (`*@example.com`). */
function containsToken(actual: string, token: string): boolean {
  const pattern = new RegExp(
    `^${token
      .toLowerCase()
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  const lower = actual.toLowerCase();
  return pattern.test(lower) || lower.split(/[\s,;]+/).some((t) => pattern.test(t));
}

/** Sort keys are worked out once per record, not once per comparison (searches sort 10k records). */
function sortBy(records: StoredRecord[], sorts: SearchSort[]): StoredRecord[] {
  const keyed = records.map((record) => ({
    record,
    keys: sorts.map((s) => {
      const v = propertyValue(record, s.propertyName);
      return v === undefined ? undefined : comparable(v);
    }),
  }));
  keyed.sort((a, b) => {
    for (let i = 0; i < sorts.length; i++) {
      const x = a.keys[i];
      const y = b.keys[i];
      // Records without the value sort last either way.
      if (x === undefined || y === undefined) {
        if (x !== y) return x === undefined ? 1 : -1;
        continue;
      }
      const c = compareComparable(x, y);
      if (c !== 0) return sorts[i]?.direction === 'DESCENDING' ? -c : c;
    }
    return Number(a.record.id) - Number(b.record.id);
  });
  return keyed.map((k) => k.record);
}
