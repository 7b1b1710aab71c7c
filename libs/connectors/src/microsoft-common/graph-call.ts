import {
  AuthenticationHandler,
  Client,
  HTTPMessageHandler,
  type Middleware,
} from '@microsoft/microsoft-graph-client';
import type { Result } from '@syncline/core';
import type { ConnectionContext, ConnectorError } from '../contract/connector';
import {
  DEFAULT_RETRY,
  type ProviderCallOptions,
  providerCall,
  type RetryPolicy,
} from '../shared/provider-call';
import { mapGraphError, toGraphFailure } from './graph-error.mapper';

export { DEFAULT_RETRY, type RetryPolicy };

/** A mapped error that still carries Graph's own code, for call sites that give it a meaning. */
export type GraphCallError = ConnectorError & { graphCode?: string };

/** Budget cost (default 1; a `$batch` costs its parts) and retries. */
export type GraphCallOptions = ProviderCallOptions;

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
 * One Graph request with the connection's plumbing (providerCall: budget before every attempt,
 * the token, one refresh on 401, bounded backoff honouring Retry-After) through the official
 * SDK, every failure mapped with Graph's own code kept. Anything thrown that is not a Graph
 * failure is a bug and propagates.
 */
export function graphCall<T>(
  ctx: ConnectionContext,
  call: (client: Client) => Promise<T>,
  options: GraphCallOptions = {},
): Promise<Result<T, GraphCallError>> {
  return providerCall<T, GraphCallError>(
    ctx,
    (token) => call(graphClient(ctx.endpoints.microsoftGraphUrl, token)),
    (thrown) => {
      const failure = toGraphFailure(thrown);
      if (!failure) return undefined;
      return {
        status: failure.status,
        error: { ...mapGraphError(failure), ...(failure.code ? { graphCode: failure.code } : {}) },
      };
    },
    options,
  );
}
