/** The list routes' search params: every filter, and the order, is part of the URL. */
export const LIST_SORTS = ['id', 'updatedAt', '-updatedAt', 'name', '-lastContacted'] as const;
export type ListSort = (typeof LIST_SORTS)[number];

/** The activity trends a list filters by; `cold` takes in the records never contacted. */
export const TRENDS = ['warming', 'steady', 'cooling', 'cold'] as const;
export type Trend = (typeof TRENDS)[number];

/** What the list shows when the URL names no order: the latest changes first. */
export const DEFAULT_SORT: ListSort = '-updatedAt';

export interface ListSearch {
  q?: string;
  owner?: string;
  stage?: string;
  /** A date (YYYY-MM-DD) or an ISO time. */
  updatedSince?: string;
  trend?: Trend;
  sort?: ListSort;
}

const text = (value: unknown, max: number): string | undefined => {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, max);
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Parses a list URL's search leniently: what it cannot read is dropped, never an error page. */
export function parseListSearch(raw: Record<string, unknown>): ListSearch {
  const search: ListSearch = {};
  const q = text(raw.q, 200);
  const owner = text(raw.owner, 100);
  const stage = text(raw.stage, 100);
  const since = text(raw.updatedSince, 40);
  if (q !== undefined) search.q = q;
  if (owner !== undefined) search.owner = owner;
  if (stage !== undefined) search.stage = stage;
  if (since !== undefined && (DATE.test(since) || !Number.isNaN(Date.parse(since))))
    search.updatedSince = since;
  if ((TRENDS as readonly unknown[]).includes(raw.trend)) search.trend = raw.trend as Trend;
  if ((LIST_SORTS as readonly unknown[]).includes(raw.sort) && raw.sort !== DEFAULT_SORT)
    search.sort = raw.sort as ListSort;
  return search;
}

/** The API's query for a list URL: a date becomes the start of that day (UTC). */
export function toApiQuery(search: ListSearch, withStage: boolean) {
  const since = search.updatedSince;
  return {
    q: search.q,
    owner: search.owner,
    stage: withStage ? search.stage : undefined,
    updatedSince: since === undefined ? undefined : DATE.test(since) ? `${since}T00:00:00Z` : since,
    trend: search.trend,
    sort: search.sort ?? DEFAULT_SORT,
  };
}

/** The distinct providers a row's source links name, in a stable order. */
export function sourceProviders(links: readonly { provider: string | null }[]): string[] {
  return [...new Set(links.map((link) => link.provider).filter((p): p is string => p !== null))].sort();
}
