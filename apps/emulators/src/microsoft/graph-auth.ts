import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { graphErrors } from './graph-errors';
import { holdsScope, scopesNeeded } from './graph-scopes';
import type { MicrosoftStateRef } from './microsoft-state';
import type { MicrosoftUser } from './user.store';

// Per-request facts kept beside the request, so the emulator adds nothing to Fastify's types.
const users = new WeakMap<FastifyRequest, MicrosoftUser>();
const accounts = new WeakMap<FastifyRequest, string>();
const clients = new WeakMap<FastifyRequest, string>();
const releases = new WeakMap<FastifyRequest, () => void>();

/** The user whose access token authorised this Graph request (`/me`). */
export function requestUser(req: FastifyRequest): MicrosoftUser {
  const user = users.get(req);
  if (!user) throw new Error(`no authenticated Microsoft user on ${req.method} ${req.url}`);
  return user;
}

/** The app (client id) the request's access token was issued to. */
export function requestClientId(req: FastifyRequest): string {
  const clientId = clients.get(req);
  if (clientId === undefined) throw new Error(`no authenticated app on ${req.method} ${req.url}`);
  return clientId;
}

/** The account (user principal name) a request is logged under, when one is known. */
export const requestAccount = (req: FastifyRequest): string | null => accounts.get(req) ?? null;

export function setRequestAccount(req: FastifyRequest, upn: string): void {
  accounts.set(req, upn);
}

/**
 * Guards Graph's routes the way Graph does, in order: the bearer token (401
 * InvalidAuthenticationToken), then the injected faults: revoke-token (the grant fails as a
 * revoked one), the token's scopes for the area (403 ErrorAccessDenied, graph-scopes.ts), the per-mailbox throttle (a `$batch` is counted by its parts, not itself), latency, rate-limit (429 ApplicationThrottled with Retry-After), server-error
 * (503 with Retry-After).
 */
export function guardGraph(app: FastifyInstance, ctx: EmulatorContext, state: MicrosoftStateRef): void {
  app.addHook('preHandler', async (req) => {
    const header = req.headers.authorization;
    const token = header?.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : undefined;
    if (!token) throw graphErrors.unauthenticated();
    const { grants, users: store } = state.current;
    const auth = grants.authenticate(token);
    const known = auth.userId === undefined ? undefined : store.get(auth.userId);
    if (known) setRequestAccount(req, known.userPrincipalName);
    if (!auth.ok || !known)
      throw graphErrors.unauthenticated('Lifetime validation failed, the token is expired.');
    const account = known.userPrincipalName;
    if (ctx.faults.take('microsoft', 'revoke-token', account)) {
      grants.fail(known.id, 'revoked');
      throw graphErrors.unauthenticated('Lifetime validation failed, the token is expired.');
    }
    const needed = scopesNeeded(req.method, req.url, req.body);
    if (needed !== undefined && !holdsScope(auth.scopes, needed)) throw graphErrors.accessDenied();
    clients.set(req, auth.clientId);
    // Admitted before the latency fault stalls it, so a slow request holds its slot.
    if (req.routeOptions.url !== BATCH_ROUTE)
      releases.set(req, state.current.throttle.admit(auth.clientId, known.id));
    const latency = ctx.faults.take('microsoft', 'latency', account);
    if (latency?.ms) await new Promise((resolve) => setTimeout(resolve, latency.ms));
    if (ctx.faults.take('microsoft', 'rate-limit', account)) throw graphErrors.throttled(1);
    if (ctx.faults.take('microsoft', 'server-error', account)) throw graphErrors.serviceUnavailable();
    users.set(req, known);
  });
  const release = async (req: FastifyRequest) => {
    releases.get(req)?.();
    releases.delete(req);
  };
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', release);
}

export const BATCH_ROUTE = '/v1.0/$batch';

/** Every Graph request into the shared request log (the control routes stay out). */
export function logGraphRequests(app: FastifyInstance, ctx: EmulatorContext): void {
  app.addHook('onResponse', async (req, reply) => {
    if (req.url.startsWith('/_emulator/')) return;
    ctx.requests.record({
      at: new Date(ctx.now()).toISOString(),
      service: 'microsoft',
      method: req.method,
      path: req.url,
      status: reply.statusCode,
      account: requestAccount(req),
    });
  });
}

/** The emulator's own origin as the client reached it: every nextLink and deltaLink is absolute https on it. */
export const originOf = (req: FastifyRequest): string => `https://${req.headers.host ?? 'localhost'}`;
