import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { INBOX_COUNTS_KEY } from '../../api/live';

/** Open conflicts and duplicates for the navigation; live events invalidate it, and every 30 s. */
export const inboxCountsQuery = queryOptions({
  queryKey: INBOX_COUNTS_KEY,
  queryFn: ({ signal }) => unwrap(api.GET('/api/v1/inbox-counts', { signal })),
  refetchInterval: 30_000,
  staleTime: 5_000,
});

/** Records whose name, email or domain holds the text, a few per type, for global search. */
export const searchQuery = (q: string) =>
  queryOptions({
    queryKey: ['global-search', q],
    queryFn: async ({ signal }) => {
      const query = { q, limit: 5 };
      const [people, companies, deals] = await Promise.all([
        unwrap(api.GET('/api/v1/people', { params: { query }, signal })),
        unwrap(api.GET('/api/v1/companies', { params: { query }, signal })),
        unwrap(api.GET('/api/v1/deals', { params: { query }, signal })),
      ]);
      return { people: people.data, companies: companies.data, deals: deals.data };
    },
    enabled: q.length >= 2,
    staleTime: 30_000,
  });
