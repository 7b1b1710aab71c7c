// What every emulator's control API shares: the JSON call, its error, and the shared fault
// and request-log routes' types.

export type FaultKind =
  | 'rate-limit'
  | 'server-error'
  | 'latency'
  | 'drop-webhooks'
  | 'duplicate-webhooks'
  | 'revoke-token'
  | 'invalidate-cursors'
  | 'validation-error';

import type { EmulatedService, LoggedRequest } from '@syncline/emulators';

export type { EmulatedService, LoggedRequest };

export interface FaultSpec {
  service: EmulatedService;
  kind: FaultKind;
  count?: number;
  ms?: number;
  /** A HubSpot portal id, a Google user's email or a Microsoft user principal name; absent = every account. */
  account?: string | number;
  /** The share of matching calls it applies to (0 < rate ≤ 1); absent = every one. */
  rate?: number;
}

export class EmulatorError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`emulator ${method} ${url} answered ${status}: ${body.slice(0, 500)}`);
    this.name = 'EmulatorError';
  }
}

export async function call<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new EmulatorError(method, url, res.status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * A data-plane request that changed something at the provider (what "our writes" means in
 * assertions): POST/PUT/PATCH/DELETE, minus reads that happen to be POSTs (search, batch
 * read, association batch read), OAuth token traffic and watch/channel bookkeeping.
 */
export function isWrite(entry: LoggedRequest): boolean {
  if (entry.method === 'GET' || entry.method === 'HEAD') return false;
  const path = entry.path.split('?')[0] ?? '';
  if (/\/search$/.test(path) || /\/batch\/read$/.test(path)) return false;
  if (path.startsWith('/oauth') || path === '/token' || path === '/revoke' || path.startsWith('/o/oauth2')) {
    return false;
  }
  if (/\/(watch|stop)$/.test(path) || path.startsWith('/calendar/v3/channels')) return false;
  // Microsoft's identity platform (tokens) and Graph's change-notification subscriptions.
  if (path.includes('/oauth2/v2.0/') || /^\/v1\.0\/subscriptions(\/|$)/.test(path)) return false;
  return true;
}

export const enc = encodeURIComponent;
