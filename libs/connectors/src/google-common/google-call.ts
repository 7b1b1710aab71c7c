import { err, ok, type Result } from '@syncline/core';
import type { ConnectionContext, ConnectorError } from '../contract/connector';
import { type GoogleFailure, mapGoogleError, toGoogleFailure } from './google-error.mapper';

/** A mapped error that still carries Google's reason, for call sites that give it a meaning. */
export type GoogleCallError = ConnectorError & { reason?: string };

export interface RetryPolicy {
  /** Extra attempts after a RateLimited or Transient answer (each one takes budget again). */
  retries: number;
  baseDelayMs: number;
  /** Longer advised waits are handed to the worker instead of slept through. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 200, maxDelayMs: 5_000 };

export interface CallOptions {
  /** Budget cost (Gmail counts quota units per method); default 1. */
  cost?: number;
  retry?: Partial<RetryPolicy>;
}

/** What every call passes to googleapis: our bearer token, and no SDK retries (we own them). */
export interface RequestOptions {
  headers: { Authorization: string };
  retry: false;
}

/**
 * One Google request with the connection's plumbing: budget before every attempt, the token
 * from the token source, one invalidate-and-retry on 401 (a second 401 is AuthRevoked),
 * bounded backoff on RateLimited/Transient, and every failure mapped to the closed set.
 * Anything thrown that is not an HTTP or network failure is a bug and propagates.
 */
export async function googleCall<T>(
  ctx: ConnectionContext,
  call: (options: RequestOptions) => Promise<{ data: T }>,
  options: CallOptions = {},
): Promise<Result<T, GoogleCallError>> {
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const first = await ctx.tokens.accessToken();
  if (!first.ok) return first;
  let token = first.value;
  let refreshed = false;
  for (let attempt = 0; ; ) {
    await ctx.budget.acquire('default', options.cost ?? 1);
    let failure: GoogleFailure;
    try {
      const res = await call({ headers: { Authorization: `Bearer ${token}` }, retry: false });
      return ok(res.data);
    } catch (error) {
      const read = toGoogleFailure(error);
      if (!read) throw error;
      failure = read;
    }
    if (failure.status === 401) {
      if (refreshed) return err({ ...mapGoogleError(failure), code: 'AuthRevoked' });
      refreshed = true;
      const next = await ctx.tokens.invalidate(token);
      if (!next.ok) return next;
      token = next.value;
      continue;
    }
    const mapped: GoogleCallError = {
      ...mapGoogleError(failure),
      ...(failure.reason ? { reason: failure.reason } : {}),
    };
    if ((mapped.code === 'RateLimited' || mapped.code === 'Transient') && attempt < policy.retries) {
      const backoff = policy.baseDelayMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
      const wait = Math.max(backoff, mapped.retryAfterMs ?? 0);
      if (wait <= policy.maxDelayMs) {
        attempt++;
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
    }
    return err(mapped);
  }
}

/** `rootUrl` as googleapis wants it: with a trailing slash (its path is dropped anyway). */
export const googleRootUrl = (ctx: ConnectionContext): string =>
  ctx.endpoints.googleRootUrl.endsWith('/') ? ctx.endpoints.googleRootUrl : `${ctx.endpoints.googleRootUrl}/`;
