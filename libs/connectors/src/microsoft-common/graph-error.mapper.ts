import { GraphClientError, GraphError } from '@microsoft/microsoft-graph-client';
import type { ConnectorError } from '../contract/connector';
import { connectorErrorFromHttp, retryAfterMs } from '../shared/http-errors';

/** A failed Graph call as the SDK reported it: the status (0: no answer), Graph's error code, the headers. */
export interface GraphFailure {
  status: number;
  /** Graph's `error.code` (`ErrorAccessDenied`, `syncStateNotFound`, `ApplicationThrottled`, …). */
  code?: string;
  message: string;
  headers: Record<string, string>;
}

/**
 * The SDK's GraphError as a failure, or undefined for anything else (a bug, which propagates).
 * A GraphError without an HTTP status (-1) is a request that got no answer (connection refused,
 * reset, timed out); a GraphClientError is the SDK refusing the call before sending it.
 */
export function toGraphFailure(error: unknown): GraphFailure | undefined {
  if (error instanceof GraphClientError) return undefined;
  if (!(error instanceof GraphError)) return undefined;
  const headers: Record<string, string> = {};
  error.headers?.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const status = Math.max(error.statusCode, 0);
  return {
    status,
    ...(error.code ? { code: error.code } : {}),
    message:
      error.message || (status === 0 ? `no answer from Microsoft Graph (${error.body})` : `HTTP ${status}`),
    headers,
  };
}

/** Graph codes whose meaning the status alone does not carry. */
const CURSOR_CODES = new Set(['syncstatenotfound', 'syncstateinvalid', 'resyncrequired']);

/**
 * Maps a Graph failure onto the closed set: an expired or evicted delta token
 * (`syncStateNotFound`, answered with 400 or 410) is CursorInvalid, a 403 (the grant lacks
 * the area's permission, or the mailbox refuses the app) AuthRevoked (the user must consent
 * again), 429 and 503 RateLimited/Transient with their Retry-After; the rest by status.
 */
export function mapGraphError(failure: GraphFailure): ConnectorError {
  const code = failure.code?.toLowerCase();
  const message = failure.code ? `${failure.code}: ${failure.message}` : failure.message;
  if (code && CURSOR_CODES.has(code))
    return { code: 'CursorInvalid', message, ...(failure.status ? { status: failure.status } : {}) };
  const mapped = connectorErrorFromHttp({ status: failure.status, headers: failure.headers, message });
  // Graph's 503 and 504 say when to come back, as its 429 does.
  if (mapped.code === 'Transient' && failure.headers['retry-after'] !== undefined)
    return { ...mapped, retryAfterMs: retryAfterMs(failure.headers) };
  return mapped;
}
