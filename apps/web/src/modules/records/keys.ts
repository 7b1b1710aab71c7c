import type { RecordType } from '../../lib/fields';

/**
 * The record page's query keys. Every key of one record starts with `['record', id]`, so the
 * live stream invalidates all of a record's reads at once. Kept apart from api.ts (which
 * loads the API client) so that the stream's logic is testable without a browser.
 */
export type TimelineKeyType = 'meeting' | 'email_activity' | 'task';

export const recordKeys = {
  all: ['record'] as const,
  /** Every read of one record (its id as the URL names it). */
  of: (id: string) => ['record', id] as const,
  detail: (type: RecordType, id: string) => ['record', id, 'detail', type] as const,
  timeline: (type: RecordType, id: string, types: readonly TimelineKeyType[]) =>
    ['record', id, 'timeline', type, [...types].sort().join(',')] as const,
  history: (type: RecordType, id: string) => ['record', id, 'history', type] as const,
  asOf: (type: RecordType, id: string, at: string) => ['record', id, 'as-of', type, at] as const,
  operations: (id: string) => ['record', id, 'identity-operations'] as const,
  /** A person's activity insights: under the record, so a change of it refreshes them too. */
  insights: (id: string) => ['record', id, 'insights'] as const,
};

/** The part of a record key that names what is read (`detail`, `timeline`…). */
export const recordKeyPart = (queryKey: readonly unknown[]): unknown => queryKey[2];
