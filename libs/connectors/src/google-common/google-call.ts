import type { Result } from '@syncline/core';
import type { ConnectionContext, ConnectorError } from '../contract/connector';
import {
  DEFAULT_RETRY,
  type ProviderCallOptions,
  providerCall,
  type RetryPolicy,
} from '../shared/provider-call';
import { mapGoogleError, toGoogleFailure } from './google-error.mapper';

/** A mapped error that still carries Google's reason, for call sites that give it a meaning. */
export type GoogleCallError = ConnectorError & { reason?: string };

export { DEFAULT_RETRY, type RetryPolicy };

export type CallOptions = ProviderCallOptions;

/** What every call passes to googleapis: our bearer token, and no SDK retries (we own them). */
export interface RequestOptions {
  headers: { Authorization: string };
  retry: false;
}

/**
 * One Google request with the connection's plumbing (providerCall: budget, token, one refresh
 * on 401, bounded backoff) through googleapis, every failure mapped with Google's reason kept.
 * Anything thrown that is not an HTTP or network failure is a bug and propagates.
 */
export function googleCall<T>(
  ctx: ConnectionContext,
  call: (options: RequestOptions) => Promise<{ data: T }>,
  options: CallOptions = {},
): Promise<Result<T, GoogleCallError>> {
  return providerCall<T, GoogleCallError>(
    ctx,
    async (token) => (await call({ headers: { Authorization: `Bearer ${token}` }, retry: false })).data,
    (thrown) => {
      const failure = toGoogleFailure(thrown);
      if (!failure) return undefined;
      return {
        status: failure.status ?? 0,
        error: { ...mapGoogleError(failure), ...(failure.reason ? { reason: failure.reason } : {}) },
      };
    },
    options,
  );
}

/** `rootUrl` as googleapis wants it: with a trailing slash (its path is dropped anyway). */
export const googleRootUrl = (ctx: ConnectionContext): string =>
  ctx.endpoints.googleRootUrl.endsWith('/') ? ctx.endpoints.googleRootUrl : `${ctx.endpoints.googleRootUrl}/`;
