import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { ApiError } from '../../api/errors';
import { queryClient, SESSION_KEY, type Session } from '../../api/query-client';

export type { Session };

/*
 * The sign-in routes. The client never sends their 401 to /sign-in (a 401 here means "signed
 * out"), and a write carries the session's CSRF token once there is a session.
 */

/** The signed-in member, or null when signed out (401). */
export const sessionQuery = queryOptions({
  queryKey: SESSION_KEY,
  queryFn: async ({ signal }): Promise<Session | null> => {
    try {
      return await unwrap(api.GET('/api/v1/auth/session', { signal }));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return null;
      throw error;
    }
  },
  staleTime: 5 * 60_000,
  retry: false,
});

/** Which ways to sign in the server offers. */
export const providersQuery = queryOptions({
  queryKey: ['auth', 'providers'],
  queryFn: ({ signal }) => unwrap(api.GET('/api/v1/auth/providers', { signal })),
  staleTime: 10 * 60_000,
});

export const oidcStartUrl = (returnTo: string): string =>
  `/api/v1/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`;

/** "Email me a link": the same answer for every address. */
export function useMagicLinkMutation() {
  return useMutation({
    mutationFn: async (body: { email: string; returnTo: string }) => {
      await api.POST('/api/v1/auth/magic-link', { body });
    },
  });
}

// One POST per token, even when React runs the effect twice: the token is single-use.
const consumptions = new Map<string, Promise<{ returnTo: string }>>();

export function consumeMagicLink(token: string): Promise<{ returnTo: string }> {
  let pending = consumptions.get(token);
  if (pending === undefined) {
    pending = unwrap(api.POST('/api/v1/auth/magic-link/consume', { body: { token } })).then(async (body) => {
      await queryClient.invalidateQueries({ queryKey: SESSION_KEY });
      return body;
    });
    consumptions.set(token, pending);
  }
  return pending;
}

export function useSignOutMutation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      await api.POST('/api/v1/auth/sign-out');
    },
    // Signed out either way: nothing of this member's stays in the cache.
    onSettled: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, null);
    },
  });
}
