import {
  AuthenticationHandler,
  Client,
  HTTPMessageHandler,
  type Middleware,
} from '@microsoft/microsoft-graph-client';
import { err, ok, type Result } from '@syncline/core';
import type { ConnectionContext, ConnectorError } from '../contract/connector';
import { DEFAULT_RETRY, type RetryPolicy } from '../google-common/google-call';
import { type GraphFailure, mapGraphError, toGraphFailure } from './graph-error.mapper';

export { DEFAULT_RETRY, type RetryPolicy };

/** A mapped error that still carries Graph's own code, for call sites that give it a meaning. */
export type GraphCallError = ConnectorError & { graphCode?: string };

export interface GraphCallOptions {
  /** Budget cost; default 1 (a `$batch` costs its parts). */
  cost?: number;
  retry?: Partial<RetryPolicy>;
}

/**
 * The official SDK with the plumbing we own: the bearer token we hand it, sent only to the
 * Graph origin we name (`customHosts`: the emulator's host in tests and the demo), and no SDK
 * retries or redirects: every attempt takes budget (graphCall), so retries are ours.
 */
export function graphClient(graphUrl: string, accessToken: string): Client {
  const auth = new AuthenticationHandler({ getAccessToken: async () => accessToken });
  const chain: Middleware = auth;
  auth.setNext(new HTTPMessageHandler());
  return Client.initWithMiddleware({
    middleware: chain,
    baseUrl: graphUrl,
    defaultVersion: 'v1.0',
    customHosts: new Set([new URL(graphUrl).hostname]),
  });
}

/**
 * One Graph request with the connection's plumbing: budget before every attempt, the token
 * from the token source, one invalidate-and-retry on 401 (a second 401 is AuthRevoked),
 * bounded backoff on RateLimited/Transient honouring Retry-After, and every failure mapped
 * to the closed set. Anything thrown that is not a Graph failure is a bug and propagates.
 */
export async function graphCall<T>(
  ctx: ConnectionContext,
  call: (client: Client) => Promise<T>,
  options: GraphCallOptions = {},
): Promise<Result<T, GraphCallError>> {
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const first = await ctx.tokens.accessToken();
  if (!first.ok) return first;
  let token = first.value;
  let refreshed = false;
  for (let attempt = 0; ; ) {
    await ctx.budget.acquire('default', options.cost ?? 1);
    let failure: GraphFailure;
    try {
      return ok(await call(graphClient(ctx.endpoints.microsoftGraphUrl, token)));
    } catch (error) {
      const read = toGraphFailure(error);
      if (!read) throw error;
      failure = read;
    }
    if (failure.status === 401) {
      if (refreshed) return err({ ...mapGraphError(failure), code: 'AuthRevoked' });
      refreshed = true;
      const next = await ctx.tokens.invalidate(token);
      if (!next.ok) return next;
      token = next.value;
      continue;
    }
    const mapped: GraphCallError = {
      ...mapGraphError(failure),
      ...(failure.code ? { graphCode: failure.code } : {}),
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
