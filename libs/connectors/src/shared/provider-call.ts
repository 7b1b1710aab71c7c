import { err, ok, type Result } from '@syncline/core';
import type { ConnectionContext, ConnectorError } from '../contract/connector';

export interface RetryPolicy {
  /** Extra attempts after a RateLimited or Transient answer (each one takes budget again). */
  retries: number;
  baseDelayMs: number;
  /** Longer advised waits are handed to the worker instead of slept through. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 200, maxDelayMs: 5_000 };

export interface ProviderCallOptions {
  /** Budget cost (Gmail counts quota units per method); default 1. */
  cost?: number;
  retry?: Partial<RetryPolicy>;
}

/** A failed attempt as a provider's SDK reported it: its HTTP status (0: no answer) and the mapped error. */
export interface FailedAttempt<E extends ConnectorError> {
  status: number;
  error: E;
}

/**
 * One provider request with the connection's plumbing, whatever the SDK: budget before every
 * attempt, the token from the token source, one invalidate-and-retry on 401 (a second 401 is
 * AuthRevoked), bounded backoff on RateLimited/Transient honouring the provider's advised wait,
 * and every failure mapped to the closed set by `read`. What `read` does not recognise (it
 * answers undefined) is a bug and propagates.
 */
export async function providerCall<T, E extends ConnectorError>(
  ctx: ConnectionContext,
  send: (accessToken: string) => Promise<T>,
  read: (thrown: unknown) => FailedAttempt<E> | undefined,
  options: ProviderCallOptions = {},
): Promise<Result<T, E | ConnectorError>> {
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const first = await ctx.tokens.accessToken();
  if (!first.ok) return first;
  let token = first.value;
  let refreshed = false;
  for (let attempt = 0; ; ) {
    await ctx.budget.acquire('default', options.cost ?? 1);
    let failed: FailedAttempt<E>;
    try {
      return ok(await send(token));
    } catch (error) {
      const read_ = read(error);
      if (!read_) throw error;
      failed = read_;
    }
    if (failed.status === 401) {
      if (refreshed) return err({ ...failed.error, code: 'AuthRevoked' });
      refreshed = true;
      const next = await ctx.tokens.invalidate(token);
      if (!next.ok) return next;
      token = next.value;
      continue;
    }
    const mapped = failed.error;
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
