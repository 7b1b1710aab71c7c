import type { ConnectorError } from '../contract/connector';

/** What a failed Google call told us, read off the SDK's error (no SDK types leave here). */
export interface GoogleFailure {
  /** HTTP status; undefined when no response arrived (network error, timeout). */
  status?: number;
  /** `error.errors[0].reason` of Google's error body (`fullSyncRequired`, `duplicate`, …). */
  reason?: string;
  /** `error.errors[0].domain` (`usageLimits`, `calendar`, `global`). */
  domain?: string;
  message: string;
  retryAfterMs?: number;
}

const RATE_LIMIT_REASONS = new Set([
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'quotaExceeded',
  'dailyLimitExceeded',
  'variableTermLimitExceeded',
]);

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'TimeoutError',
  'AbortError',
]);

/** Default wait for a rate limit that names none (Google rarely sends Retry-After). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;

/**
 * Reads a thrown googleapis (gaxios) error. Returns undefined for anything that is not an
 * HTTP or network failure: those are bugs and are rethrown by the caller.
 */
export function toGoogleFailure(error: unknown): GoogleFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as {
    message?: unknown;
    code?: unknown;
    status?: unknown;
    response?: { status?: unknown; data?: unknown; headers?: unknown };
  };
  const message = typeof e.message === 'string' ? e.message : 'Google call failed';
  if (e.response && typeof e.response.status === 'number') {
    const body = readErrorBody(e.response.data);
    return {
      status: e.response.status,
      message: body.message ?? message,
      ...(body.reason ? { reason: body.reason } : {}),
      ...(body.domain ? { domain: body.domain } : {}),
      ...retryAfter(e.response.headers),
    };
  }
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return { message };
  if (error instanceof Error && error.name === 'GaxiosError') return { message };
  return undefined;
}

function readErrorBody(data: unknown): { message?: string; reason?: string; domain?: string } {
  if (typeof data !== 'object' || data === null) return {};
  const error = (data as { error?: unknown }).error;
  // OAuth endpoints answer `{ error: "invalid_grant" }`.
  if (typeof error === 'string') return { reason: error, message: error };
  if (typeof error !== 'object' || error === null) return {};
  const body = error as { message?: unknown; errors?: unknown };
  const first = Array.isArray(body.errors)
    ? (body.errors[0] as Record<string, unknown> | undefined)
    : undefined;
  return {
    ...(typeof body.message === 'string' ? { message: body.message } : {}),
    ...(typeof first?.reason === 'string' ? { reason: first.reason } : {}),
    ...(typeof first?.domain === 'string' ? { domain: first.domain } : {}),
  };
}

function retryAfter(headers: unknown): { retryAfterMs?: number } {
  let raw: string | null | undefined;
  if (headers && typeof (headers as Headers).get === 'function')
    raw = (headers as Headers).get('retry-after');
  else if (headers && typeof headers === 'object') raw = (headers as Record<string, string>)['retry-after'];
  if (!raw) return {};
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return { retryAfterMs: Math.max(0, seconds * 1000) };
  const at = Date.parse(raw);
  return Number.isFinite(at) ? { retryAfterMs: Math.max(0, at - Date.now()) } : {};
}

export function isRateLimit(f: GoogleFailure): boolean {
  return (
    f.status === 429 ||
    (f.status === 403 &&
      (f.domain === 'usageLimits' || (f.reason !== undefined && RATE_LIMIT_REASONS.has(f.reason))))
  );
}

/**
 * Google's answers → the closed set. Call sites with a meaning of their own (409 duplicate
 * on a client-chosen id, Gmail's 404 on history) decide before calling this.
 */
export function mapGoogleError(f: GoogleFailure): ConnectorError {
  const base = {
    message: f.reason ? `${f.reason}: ${f.message}` : f.message,
    ...(f.status ? { status: f.status } : {}),
  };
  if (f.status === undefined) return { code: 'Transient', ...base };
  if (isRateLimit(f))
    return { code: 'RateLimited', retryAfterMs: f.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS, ...base };
  if (f.status === 401) return { code: 'AuthRevoked', ...base };
  if (f.status === 403) {
    const auth =
      f.reason === 'insufficientPermissions' ||
      f.reason === 'authError' ||
      f.reason === 'accessNotConfigured';
    return { code: auth ? 'AuthRevoked' : 'Validation', ...base };
  }
  if (f.status === 404) return { code: 'NotFound', ...base };
  if (f.status === 409 || f.status === 412) return { code: 'Conflict', ...base };
  if (f.status === 410)
    return { code: f.reason === 'fullSyncRequired' ? 'CursorInvalid' : 'NotFound', ...base };
  if (f.status === 408 || f.status >= 500) return { code: 'Transient', ...base };
  return { code: 'Validation', ...base };
}
