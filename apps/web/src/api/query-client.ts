import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './errors';
import type { paths } from './schema';

/** The session query's key: the API client reads its CSRF token from here. */
export const SESSION_KEY = ['auth', 'session'] as const;

/** What GET /api/v1/auth/session answers for a signed-in member. */
export type Session = paths['/api/v1/auth/session']['get']['responses'][200]['content']['application/json'];

/** All server state lives here; a 4xx is an answer, not a glitch, so only other failures are retried. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      retry: (failures, error) =>
        failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
    },
  },
});
