import { type Query, type QueryClient, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { RecordView } from '../modules/records/api';
import { recordKeyPart, recordKeys } from '../modules/records/keys';

/**
 * Live updates: one `EventSource` on `/api/v1/stream` for the app's lifetime (same origin,
 * the session cookie; no token in the URL). Reconnecting is EventSource's own, and the
 * server starts a resumed stream with a `refetch`.
 *
 * - `record.changed {id, type, version}`: that record's reads are invalidated at once (the
 *   open page refetches what it shows); lists, the conflicts inbox and the inbox counts, at
 *   most every 300 ms.
 * - `refetch`: changes may have been missed, so everything is read again.
 * - the stream opening (first time too): what the page read before the stream listened may
 *   have missed a change made in between (a conflict opened while the inbox loaded), so what it
 *   shows is read again, once, after the debounce (by then the first reads are in).
 *
 * List queries are keyed `['records-list', type, …]` and the inbox counts `['inbox-counts']`.
 */
export const STREAM_URL = '/api/v1/stream';
export const LIST_KEY_PREFIX = ['records-list'] as const;
export const INBOX_COUNTS_KEY = ['inbox-counts'] as const;
/** The conflicts inbox (modules/conflicts): a change may open or settle a conflict. */
const CONFLICTS_KEY_PREFIX = ['conflicts'] as const;
const LIST_DEBOUNCE_MS = 300;

const ACTIVITY_TYPES = new Set(['meeting', 'email_activity', 'task']);

interface RecordChanged {
  id: string;
  type: string;
  version: number;
}

function parseChanged(data: unknown): RecordChanged | null {
  if (typeof data !== 'string') return null;
  try {
    const parsed = JSON.parse(data) as Partial<RecordChanged>;
    return typeof parsed.id === 'string' &&
      typeof parsed.type === 'string' &&
      typeof parsed.version === 'number'
      ? { id: parsed.id, type: parsed.type, version: parsed.version }
      : null;
  } catch {
    return null;
  }
}

/** A cached record view already at (or past) the announced version needs no refetch (our own edit's 200). */
function alreadyHas(query: Query, version: number): boolean {
  if (recordKeyPart(query.queryKey) !== 'detail') return false;
  const view = query.state.data as RecordView | undefined;
  return view !== undefined && !query.state.isInvalidated && view.version >= version;
}

/** What one `record.changed` invalidates now; lists and counts wait for the debounce. */
export function invalidateRecord(queryClient: QueryClient, change: RecordChanged): Promise<void> {
  return queryClient.invalidateQueries({
    queryKey: recordKeys.of(change.id.toLowerCase()),
    predicate: (query) => !alreadyHas(query, change.version),
  });
}

/** What the stream's events do to the cache; `dispose` drops a pending list refresh. */
export function liveHandlers(queryClient: QueryClient) {
  let listTimer: ReturnType<typeof setTimeout> | undefined;
  let openTimer: ReturnType<typeof setTimeout> | undefined;
  let activityChanged = false;

  // Trailing, at most once per window: a backfill's stream of changes reads each list once per window.
  const invalidateListsSoon = () => {
    if (listTimer !== undefined) return;
    listTimer = setTimeout(() => {
      listTimer = undefined;
      void queryClient.invalidateQueries({ queryKey: LIST_KEY_PREFIX });
      void queryClient.invalidateQueries({ queryKey: INBOX_COUNTS_KEY });
      void queryClient.invalidateQueries({ queryKey: CONFLICTS_KEY_PREFIX });
      if (activityChanged) {
        activityChanged = false;
        // A meeting or mail appears on the timelines of its people, companies and deals.
        void queryClient.invalidateQueries({
          queryKey: recordKeys.all,
          predicate: (query) => recordKeyPart(query.queryKey) === 'timeline',
        });
      }
    }, LIST_DEBOUNCE_MS);
  };

  return {
    recordChanged(data: unknown): void {
      const change = parseChanged(data);
      if (change === null) return;
      void invalidateRecord(queryClient, change);
      if (ACTIVITY_TYPES.has(change.type)) activityChanged = true;
      invalidateListsSoon();
    },
    refetch(): void {
      void queryClient.invalidateQueries();
    },
    opened(): void {
      clearTimeout(openTimer);
      openTimer = setTimeout(() => {
        openTimer = undefined;
        void queryClient.invalidateQueries();
      }, LIST_DEBOUNCE_MS);
    },
    dispose(): void {
      clearTimeout(listTimer);
      clearTimeout(openTimer);
      listTimer = undefined;
      openTimer = undefined;
    },
  };
}

export function useLiveUpdates(): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const source = new EventSource(STREAM_URL);
    const handlers = liveHandlers(queryClient);
    const onChanged = (event: MessageEvent) => handlers.recordChanged(event.data);
    const onRefetch = () => handlers.refetch();
    const onOpen = () => handlers.opened();
    source.addEventListener('record.changed', onChanged);
    source.addEventListener('refetch', onRefetch);
    source.addEventListener('open', onOpen);
    return () => {
      handlers.dispose();
      source.removeEventListener('record.changed', onChanged);
      source.removeEventListener('refetch', onRefetch);
      source.removeEventListener('open', onOpen);
      source.close();
    };
  }, [queryClient]);
}
