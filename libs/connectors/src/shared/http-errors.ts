import type { ConnectorError } from '../contract/connector';

export interface HttpFailure {
  /** HTTP status; 0 or absent for a network failure (no answer). */
  status?: number;
  headers?: Readonly<Record<string, string | undefined>>;
  message: string;
}

/**
 * Maps an HTTP failure onto the closed set. Providers refine what this cannot know (a
 * Google 403 `rateLimitExceeded`, a HubSpot search window past 10,000, a Gmail 404 on a
 * stale history id); a 401 here means the token was refused after a refresh.
 */
export function connectorErrorFromHttp(failure: HttpFailure): ConnectorError {
  const { status, message } = failure;
  if (!status) return { code: 'Transient', message };
  if (status === 429)
    return { code: 'RateLimited', message, status, retryAfterMs: retryAfterMs(failure.headers) };
  if (status >= 500 || status === 408) return { code: 'Transient', message, status };
  if (status === 401 || status === 403) return { code: 'AuthRevoked', message, status };
  if (status === 404) return { code: 'NotFound', message, status };
  if (status === 410) return { code: 'CursorInvalid', message, status };
  if (status === 409 || status === 412) return { code: 'Conflict', message, status };
  return { code: 'Validation', message, status };
}

/** Retry-After (seconds or an HTTP date), else HubSpot's window length, else one second. */
export function retryAfterMs(
  headers: Readonly<Record<string, string | undefined>> = {},
  now = Date.now(),
): number {
  const get = (name: string) =>
    Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? undefined;
  const retryAfter = get('retry-after');
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  const interval = Number(get('x-hubspot-ratelimit-interval-milliseconds'));
  if (Number.isFinite(interval) && interval > 0) return interval;
  return 1_000;
}

/** Whether a code is worth retrying in place (after the advised wait). */
export const isRetryable = (error: ConnectorError): boolean =>
  error.code === 'RateLimited' || error.code === 'Transient';
