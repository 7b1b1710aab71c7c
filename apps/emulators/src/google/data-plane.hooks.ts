import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { googleErrors } from './google-errors';
import type { GoogleStateRef } from './google-state';
import type { GoogleApi } from './rate-limiter';
import type { GoogleUser } from './user.store';

// Per-request facts kept beside the request rather than declared on FastifyRequest, so the
// Google emulator adds nothing to Fastify's global types.
const users = new WeakMap<FastifyRequest, GoogleUser>();
const accounts = new WeakMap<FastifyRequest, string>();

/** The user whose access token authorised this request (set by the data-plane hook). */
export function requestUser(req: FastifyRequest): GoogleUser {
  const user = users.get(req);
  if (!user) throw new Error(`no authenticated Google user on ${req.method} ${req.url}`);
  return user;
}

/** The account a request is logged under, when one is known. */
export const requestAccount = (req: FastifyRequest): string | null => accounts.get(req) ?? null;

export function setRequestAccount(req: FastifyRequest, email: string): void {
  accounts.set(req, email);
}

const bearerToken = (req: FastifyRequest): string | undefined => {
  const header = req.headers.authorization;
  if (header?.toLowerCase().startsWith('bearer ')) return header.slice(7).trim();
  const query = (req.query as Record<string, unknown> | undefined)?.access_token;
  return typeof query === 'string' ? query : undefined;
};

/**
 * Guards one API's routes the way Google does, in this order: the access token (401),
 * the injected faults (revoke-token, latency, rate-limit, server-error) and the user's real
 * quota. `unitsOf` prices a call in quota units (Gmail counts units, the others calls).
 */
export function guardDataPlane(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: GoogleStateRef,
  api: GoogleApi,
  unitsOf: (req: FastifyRequest) => number = () => 1,
): void {
  app.addHook('preHandler', async (req) => {
    const token = bearerToken(req);
    if (!token) throw googleErrors.loginRequired();
    const { grants, users: store, limiter } = state.current;
    const auth = grants.authenticate(token);
    if (auth.email) setRequestAccount(req, auth.email);
    if (!auth.ok) throw googleErrors.authError();
    const user = store.get(auth.email);
    if (!user) throw googleErrors.authError();
    if (ctx.faults.take('google', 'revoke-token', user.email)) {
      grants.revokeAll(user.email);
      throw googleErrors.authError();
    }
    const latency = ctx.faults.take('google', 'latency', user.email);
    if (latency?.ms) await new Promise((resolve) => setTimeout(resolve, latency.ms));
    if (ctx.faults.take('google', 'rate-limit', user.email))
      throw googleErrors.rateLimited(user.rateLimitStatus);
    if (!limiter.admit(user.email, api, unitsOf(req), user.limits))
      throw googleErrors.rateLimited(user.rateLimitStatus);
    if (ctx.faults.take('google', 'server-error', user.email)) throw googleErrors.backendError();
    users.set(req, user);
  });
}

/** Records every request but the control API's in the shared log, once its status is known. */
export function logRequests(app: FastifyInstance, ctx: EmulatorContext): void {
  app.addHook('onResponse', async (req, reply) => {
    if (req.url.startsWith('/_emulator/')) return;
    ctx.requests.record({
      at: new Date(ctx.now()).toISOString(),
      service: 'google',
      method: req.method,
      path: req.url,
      status: reply.statusCode,
      account: requestAccount(req),
    });
  });
}
