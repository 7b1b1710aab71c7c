import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { apiErrorOf } from '../../api/errors';
import { queryClient, SESSION_KEY, type Session } from '../../api/query-client';

export type { Session };

/**
 * The sign-in routes. They are called with fetch directly: a 401 here means "signed out"
 * (not "send me to /sign-in"), and some are called before there is a session at all.
 */
async function authRequest<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const csrfToken = queryClient.getQueryData<Session | null>(SESSION_KEY)?.csrfToken;
  if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await apiErrorOf(response);
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** The signed-in member, or null when signed out (401). */
export const sessionQuery = queryOptions({
  queryKey: SESSION_KEY,
  queryFn: async (): Promise<Session | null> => {
    try {
      return await authRequest<Session>('GET', '/api/v1/auth/session');
    } catch (error) {
      if ((error as { status?: unknown }).status === 401) return null;
      throw error;
    }
  },
  staleTime: 5 * 60_000,
  retry: false,
});

/** Which ways to sign in the server offers. */
export interface AuthProviders {
  oidc: boolean;
  oidcLabel: string | null;
  magicLink: boolean;
}

/** Reads `GET /auth/providers` leniently: `oidc` may be a flag or `{ enabled, name }`. */
function readProviders(raw: unknown): AuthProviders {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const flag = (value: unknown): boolean =>
    typeof value === 'boolean'
      ? value
      : typeof value === 'object' && value !== null && (value as { enabled?: unknown }).enabled === true;
  const oidc = body.oidc;
  const label =
    typeof oidc === 'object' && oidc !== null
      ? ((oidc as { name?: unknown; label?: unknown }).label ?? (oidc as { name?: unknown }).name)
      : undefined;
  return {
    oidc: flag(oidc),
    oidcLabel: typeof label === 'string' ? label : null,
    magicLink: body.magicLink === undefined ? true : flag(body.magicLink),
  };
}

export const providersQuery = queryOptions({
  queryKey: ['auth', 'providers'],
  queryFn: async () => readProviders(await authRequest<unknown>('GET', '/api/v1/auth/providers')),
  staleTime: 10 * 60_000,
});

export const oidcStartUrl = (returnTo: string): string =>
  `/api/v1/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`;

export function useMagicLinkMutation() {
  return useMutation({
    mutationFn: (body: { email: string; returnTo: string }) =>
      authRequest<unknown>('POST', '/api/v1/auth/magic-link', body),
  });
}

// One POST per token, even when React runs the effect twice: the token is single-use.
const consumptions = new Map<string, Promise<{ returnTo: string | null }>>();

export function consumeMagicLink(token: string): Promise<{ returnTo: string | null }> {
  let pending = consumptions.get(token);
  if (pending === undefined) {
    pending = authRequest<{ returnTo?: unknown }>('POST', '/api/v1/auth/magic-link/consume', { token }).then(
      async (body) => {
        await queryClient.invalidateQueries({ queryKey: SESSION_KEY });
        return { returnTo: typeof body?.returnTo === 'string' ? body.returnTo : null };
      },
    );
    consumptions.set(token, pending);
  }
  return pending;
}

export function useSignOutMutation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => authRequest<unknown>('POST', '/api/v1/auth/sign-out'),
    onSettled: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, null);
    },
  });
}
