import createClient, { type Middleware } from 'openapi-fetch';
import { ApiError, apiErrorOf } from './errors';
import { queryClient, SESSION_KEY, type Session } from './query-client';
import type { paths } from './schema';

export { ApiError } from './errors';

/** The longest a 429 is waited out before a GET is retried (a longer wait is shown instead). */
const MAX_RETRY_WAIT_S = 30;

/** Where a 401 sends the browser; the router replaces this with a client-side navigation. */
let onUnauthorized = (): void => {
  window.location.assign(`/sign-in?returnTo=${encodeURIComponent(currentReturnTo())}`);
};

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/** The page to come back to after signing in: path and query, never the sign-in page itself. */
export function currentReturnTo(): string {
  const { pathname, search } = window.location;
  return pathname.startsWith('/sign-in') ? '/' : `${pathname}${search}`;
}

const isSafe = (method: string) => method === 'GET' || method === 'HEAD';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const session: Middleware = {
  onRequest({ request }) {
    if (isSafe(request.method)) return undefined;
    const csrfToken = queryClient.getQueryData<Session>(SESSION_KEY)?.csrfToken;
    if (csrfToken !== undefined) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

const errors: Middleware = {
  async onResponse({ request, response }) {
    let answer = response;
    // A 429 on a read is waited out once; a write is never repeated behind the caller's back.
    if (answer.status === 429 && isSafe(request.method)) {
      const wait = (await apiErrorOf(answer)).retryAfter ?? 1;
      if (wait <= MAX_RETRY_WAIT_S) {
        await sleep(wait * 1000);
        answer = await fetch(new Request(request));
      }
    }
    if (answer.ok) return answer;
    const error = await apiErrorOf(answer);
    // The auth routes answer 401 as "signed out"; their callers decide what to show.
    const url = new URL(request.url);
    if (answer.status === 401 && !url.pathname.startsWith('/api/v1/auth/')) {
      queryClient.setQueryData(SESSION_KEY, null);
      // Drafts live in sessionStorage (per record and field), so they survive this trip.
      onUnauthorized();
    }
    // A stale CSRF token (the session was renewed elsewhere): the next write reads a fresh one.
    if (answer.status === 403 && error.code === 'csrf_failed')
      void queryClient.invalidateQueries({ queryKey: SESSION_KEY });
    throw error;
  },
};

/**
 * The typed API client. Same origin, with the session cookie; every non-2xx answer rejects
 * with an ApiError, so `data` is there whenever the promise resolves (see `unwrap`).
 */
export const api = createClient<paths>({
  // Outside a browser (a unit test importing a module that imports this) there is no origin.
  baseUrl: typeof window === 'undefined' ? 'http://localhost' : window.location.origin,
  credentials: 'same-origin',
});
api.use(session, errors);

/** The body of a call that succeeded (errors have already been thrown as ApiError). */
export async function unwrap<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  const { data, response } = await call;
  if (data === undefined && response.status !== 204)
    throw new ApiError({
      status: response.status,
      code: 'empty_response',
      message: 'The server answered without a body.',
    });
  return data as T;
}

/** A fresh key for one user intent (an edit, a merge); a retry of that intent reuses it. */
export const newIdempotencyKey = (): string => crypto.randomUUID();
