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

import http from 'node:http';
import https from 'node:https';
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

// Kept-alive sockets to the emulators: a bench drives hundreds of edits a second through
// `call`, on the machine the measured system runs on, and `fetch` costs several times the CPU
// of a plain request on a warm socket.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

export async function call<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const { status, text } = await send(url, method, body === undefined ? undefined : JSON.stringify(body));
  if (status < 200 || status > 299) throw new EmulatorError(method, url, status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

function send(
  url: string,
  method: string,
  body: string | undefined,
): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const payload = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      target,
      {
        method,
        agent: secure ? agents['https:'] : agents['http:'],
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(payload.length) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
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
