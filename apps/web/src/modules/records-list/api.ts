import { infiniteQueryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { LIST_KEY_PREFIX } from '../../api/live';
import { type ListSearch, toApiQuery } from './utils/list-search';

export type ListType = 'person' | 'company' | 'deal';

const PAGE_SIZE = 50;

/** Keyed under the live stream's list prefix, so a record change refreshes the open list. */
export const listKeys = {
  all: LIST_KEY_PREFIX,
  list: (type: ListType, search: ListSearch) => [...LIST_KEY_PREFIX, type, search] as const,
};

function fetchPage(type: ListType, search: ListSearch, cursor: string | undefined, signal: AbortSignal) {
  const base = { ...toApiQuery(search, type !== 'company'), limit: PAGE_SIZE, cursor };
  switch (type) {
    case 'person':
      return unwrap(api.GET('/api/v1/people', { params: { query: base }, signal }));
    case 'company': {
      const { stage: _stage, ...query } = base;
      return unwrap(api.GET('/api/v1/companies', { params: { query }, signal }));
    }
    case 'deal':
      return unwrap(api.GET('/api/v1/deals', { params: { query: base }, signal }));
  }
}

export const listQuery = (type: ListType, search: ListSearch) =>
  infiniteQueryOptions({
    queryKey: listKeys.list(type, search),
    queryFn: ({ pageParam, signal }) => fetchPage(type, search, pageParam, signal),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });
