import { Client } from '@hubspot/api-client';
import { err, ok } from '@syncline/core';
import type { ConnectionContext, ConnectorError, ConnectorResult } from '../contract/connector';
import { connectorErrorFromHttp, isRetryable } from '../shared/http-errors';

/** Retries in place per request; past them the code goes to the worker. */
const MAX_RETRIES = 3;

/**
 * The official SDK for one connector call: every request waits for the connection's budget,
 * a 401 refreshes the token once (a second 401 is AuthRevoked), 429 and 5xx are retried a few
 * times, and every SDK error is mapped onto the closed set here, at the boundary.
 */
export class HubspotSession {
  private client: Client | undefined;
  private token: string | undefined;
  /** Requests sent and 429s met, for benches and logs. */
  readonly stats = { requests: 0, rateLimited: 0, retries: 0 };

  constructor(private readonly ctx: ConnectionContext) {}

  async call<T>(kind: 'default' | 'search', fn: (client: Client) => Promise<T>): Promise<ConnectorResult<T>> {
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const token = await this.ctx.tokens.accessToken();
      if (!token.ok) return token;
      const client = this.clientFor(token.value);
      await this.ctx.budget.acquire(kind);
      this.stats.requests++;
      try {
        return ok(await fn(client));
      } catch (thrown) {
        const error = hubspotError(thrown);
        if (error.status === 401) {
          if (refreshed) return err({ ...error, code: 'AuthRevoked' });
          refreshed = true;
          const next = await this.ctx.tokens.invalidate(token.value);
          if (!next.ok) return next;
          continue;
        }
        if (error.code === 'RateLimited') this.stats.rateLimited++;
        if (!isRetryable(error) || attempt >= MAX_RETRIES) return err(error);
        this.stats.retries++;
        const wait =
          error.code === 'RateLimited' ? Math.min(error.retryAfterMs ?? 1_000, 2_000) : 200 * 2 ** attempt;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private clientFor(token: string): Client {
    if (!this.client || this.token !== token) {
      // Retries and limits are ours (budget + the loop above), so the SDK's own stay off.
      this.client = new Client({ accessToken: token, basePath: this.ctx.endpoints.hubspotBaseUrl });
      this.token = token;
    }
    return this.client;
  }
}

interface SdkError {
  code?: unknown;
  body?: unknown;
  headers?: Record<string, string>;
  message?: string;
}

/** An SDK ApiException (code, body, headers) or a network failure → ConnectorError. */
export function hubspotError(thrown: unknown): ConnectorError {
  const e = (thrown ?? {}) as SdkError;
  const status = typeof e.code === 'number' ? e.code : undefined;
  const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as Record<string, unknown>;
  const message = String(body.message ?? e.message ?? 'HubSpot request failed');
  if (status === undefined) return { code: 'Transient', message };
  const error = connectorErrorFromHttp({ status, headers: e.headers ?? {}, message });
  if (error.code === 'RateLimited') {
    // A rolling window frees gradually: wait a tenth of it (the secondly search limit: a second).
    const interval = Number(e.headers?.['x-hubspot-ratelimit-interval-milliseconds']);
    error.retryAfterMs =
      body.policyName === 'SECONDLY' || !(interval > 0) ? 1_000 : Math.max(100, interval / 10);
  }
  return error;
}
