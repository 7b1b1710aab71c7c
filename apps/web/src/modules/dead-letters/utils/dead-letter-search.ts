/** The dead-letter page's search params: which letters it shows is part of the URL. */
export const LETTER_STATUSES = ['open', 'retried', 'discarded'] as const;
export type LetterStatus = (typeof LETTER_STATUSES)[number];

export interface DeadLetterSearch {
  /** `all` shows every status; absent means open, what an admin acts on. */
  status?: LetterStatus | 'all';
  connectionId?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Parses the URL's search leniently: what it cannot read is dropped, never an error page. */
export function parseDeadLetterSearch(raw: Record<string, unknown>): DeadLetterSearch {
  const search: DeadLetterSearch = {};
  const status = raw.status;
  if (status === 'all' || (status !== 'open' && LETTER_STATUSES.includes(status as LetterStatus)))
    search.status = status as DeadLetterSearch['status'];
  if (typeof raw.connectionId === 'string' && UUID.test(raw.connectionId))
    search.connectionId = raw.connectionId.toLowerCase();
  return search;
}

/** The list query the API takes for a page's search. */
export function toLetterQuery(search: DeadLetterSearch): { status?: LetterStatus; connectionId?: string } {
  const status = search.status ?? 'open';
  return {
    ...(status === 'all' ? {} : { status }),
    ...(search.connectionId === undefined ? {} : { connectionId: search.connectionId }),
  };
}
