import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  expiredAuthentication,
  internalError,
  invalidAuthentication,
  rateLimitError,
  validationError,
} from './errors';
import type { HubspotState } from './hubspot-state';
import type { Portal } from './portal';
import type { AccessToken } from './token-store';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, once its bearer token checked out. */
    hubspotAuth: { portal: Portal; token: AccessToken } | null;
    /** The portal id for the request log, whenever it is known (even on a 401). */
    hubspotAccount: string | null;
  }
  interface FastifyContextConfig {
    /** Which limit a route counts against: the rolling window (default) or search's own. */
    hubspotLimit?: 'standard' | 'search';
  }
}

/** A CRM call that changes something: not a read, a batch read or a search (POSTs that read). */
function isCrmWrite(req: FastifyRequest): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const path = req.url.split('?')[0] ?? '';
  return path.startsWith('/crm/') && !/\/(search|batch\/read)$/.test(path);
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

/** The caller of a data-plane route (the gate guarantees it). */
export function authOf(req: FastifyRequest): { portal: Portal; token: AccessToken } {
  if (!req.hubspotAuth) throw invalidAuthentication();
  return req.hubspotAuth;
}

/**
 * Runs before every CRM route, in HubSpot's order: authentication, then injected faults,
 * then the portal's rate limits (whose headers every non-search answer carries).
 */
export function registerDataPlaneGate(api: FastifyInstance, state: HubspotState): void {
  const { ctx } = state;
  api.addHook('onRequest', async (req, reply) => {
    const now = ctx.now();
    const check = state.tokens.checkAccess(bearerToken(req), now);
    // Whose token it was is known even when it no longer works, for the request log.
    if ('token' in check) req.hubspotAccount = String(check.token.portalId);
    if (!check.ok) {
      if (check.reason === 'EXPIRED') throw expiredAuthentication(now - check.token.expiresAt);
      throw invalidAuthentication();
    }
    const portalId = check.token.portalId;
    const portal = state.portals.get(portalId);
    if (!portal) throw invalidAuthentication();
    if (ctx.faults.take('hubspot', 'revoke-token', portalId)) {
      state.tokens.revokePortal(portalId);
      throw invalidAuthentication();
    }
    req.hubspotAuth = { portal, token: check.token };

    const latency = ctx.faults.take('hubspot', 'latency', portalId);
    if (latency) await sleep(latency.ms ?? 1000);
    const group = `publicapi:oauth:${portal.settings.appId}:${portalId}`;
    if (ctx.faults.take('hubspot', 'rate-limit', portalId)) {
      throw rateLimitError('TEN_SECONDLY_ROLLING', group, portal.limiter.exhaustedHeaders(ctx.now()));
    }
    if (ctx.faults.take('hubspot', 'server-error', portalId)) throw internalError();
    if (isCrmWrite(req) && ctx.faults.take('hubspot', 'validation-error', portalId))
      throw validationError(
        'Property values were not valid: [{"isValid":false,"message":"The value is not one of the allowed options (injected fault).","error":"INVALID_OPTION","name":"jobtitle"}]',
        { properties: ['jobtitle'] },
      );

    const limit = req.routeOptions.config.hubspotLimit ?? 'standard';
    const outcome =
      limit === 'search' ? portal.limiter.takeSearch(ctx.now()) : portal.limiter.takeStandard(ctx.now());
    if (!outcome.allowed) throw rateLimitError(outcome.policy, group, outcome.headers);
    reply.headers(outcome.headers);
  });
}
