/** The API answers every error as `{ "error": { "code", "message" } }`; this is it in the browser. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  /** Seconds to wait before asking again (a 429's or 503's `Retry-After`); null without one. */
  readonly retryAfter: number | null;
  /** What else the error body names beside code and message (a 409 replay_running's `replayId`). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    retryAfter?: number | null;
    details?: Readonly<Record<string, unknown>>;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.retryAfter = init.retryAfter ?? null;
    this.details = init.details ?? {};
  }
}

/** The network itself failed (offline, the API down): no status, no body. */
export const NETWORK_ERROR_CODE = 'network_error';

interface ErrorBody {
  error: { code: string; message: string; [detail: string]: unknown };
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** `Retry-After` in seconds (a number, or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** An ApiError from a failed response: its error body when it has one, else the status. */
export async function apiErrorOf(response: Response): Promise<ApiError> {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    body = undefined;
  }
  if (isErrorBody(body)) {
    const { code, message, ...details } = body.error;
    return new ApiError({ status: response.status, code, message, retryAfter, details });
  }
  return new ApiError({
    status: response.status,
    code: `http_${response.status}`,
    message: response.statusText || `The server answered ${response.status}.`,
    retryAfter,
  });
}

/** What to tell a person about an error: the API's message, or a sentence for the ones without. */
export function describeError(error: unknown): { title: string; message: string; code: string | null } {
  if (error instanceof ApiError) {
    const title =
      TITLES[error.status] ?? (error.status >= 500 ? 'The server had a problem' : 'Request failed');
    return { title, message: withWait(error), code: error.code };
  }
  if (error instanceof TypeError)
    return {
      title: 'Cannot reach Syncline',
      message: 'Check your connection; the server may be restarting.',
      code: NETWORK_ERROR_CODE,
    };
  return {
    title: 'Something went wrong',
    message: error instanceof Error ? error.message : String(error),
    code: null,
  };
}

/** "in 40 s", "in 51 min": how long a Retry-After asks to wait. */
export function waitWords(seconds: number): string {
  return seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

/** A 429's message with the wait, unless the API's message already says when to retry. */
function withWait(error: ApiError): string {
  if (error.status !== 429 || error.retryAfter === null || /retry|try again/i.test(error.message))
    return error.message;
  const stop = /[.!?]$/.test(error.message) ? ' ' : '. ';
  return `${error.message}${stop}Try again in ${waitWords(error.retryAfter)}.`;
}

const TITLES: Record<number, string> = {
  400: 'The request was refused',
  401: 'You are signed out',
  403: 'Not allowed',
  404: 'Not found',
  409: 'It changed meanwhile',
  412: 'Someone else changed it first',
  429: 'Too many requests',
  503: 'Temporarily unavailable',
};
