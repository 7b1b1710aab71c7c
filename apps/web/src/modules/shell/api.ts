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

/**
 * What an admin must act on: connections that need reconnecting or failed, and whether any
 * dead letters are open (one is enough to say so).
 */
export const adminAttentionQuery = queryOptions({
  queryKey: ['admin-attention'],
  queryFn: async ({ signal }) => {
    const [connections, deadLetters] = await Promise.all([
      unwrap(api.GET('/api/v1/connections', { signal })),
      unwrap(api.GET('/api/v1/dead-letters', { params: { query: { status: 'open', limit: 1 } }, signal })),
    ]);
    return {
      broken: connections.data.filter((c) => c.status === 'needs_reauth' || c.status === 'error'),
      deadLetters: deadLetters.data.length > 0,
    };
  },
  refetchInterval: 15_000,
  staleTime: 10_000,
});
