/** The record routes' search params: the tab, and the time the fields are shown as of. */
export const RECORD_TABS = ['timeline', 'history', 'identity'] as const;
export type RecordTab = (typeof RECORD_TABS)[number];

export interface RecordSearch {
  tab?: RecordTab;
  asOf?: string;
}

/** Leniently: an unknown tab or an unreadable time is dropped, never an error page. */
export function parseRecordSearch(raw: Record<string, unknown>): RecordSearch {
  const search: RecordSearch = {};
  if ((RECORD_TABS as readonly unknown[]).includes(raw.tab)) search.tab = raw.tab as RecordTab;
  if (typeof raw.asOf === 'string' && !Number.isNaN(Date.parse(raw.asOf))) search.asOf = raw.asOf;
  return search;
}
