import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { guardGraph, originOf, requestUser } from '../graph-auth';
import { graphErrors } from '../graph-errors';
import type { MicrosoftStateRef } from '../microsoft-state';
import { registerAuthorizeRoutes } from './authorize.routes';
import { discoveryDocument, keySet, pairwiseSubject } from './id-token';
import { aadsts, refusalIds, tokenErrorBody } from './identity-errors';
import { parseTenant, type Tenant } from './tenants';
import { registerTokenRoute } from './token.routes';

type TenantParams = { Params: { tenant: string } };

/**
 * The Microsoft identity platform v2.0 at its real paths under `/{tenant}`: the sign-in
 * pages, the token endpoint, the signing keys and OpenID Connect discovery; and Graph's
 * `/oidc/userinfo`, behind Graph's token guard.
 */
export function registerIdentityRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  registerAuthorizeRoutes(app, ctx, state);
  registerTokenRoute(app, ctx, state);

  const withTenant = (segment: string, reply: FastifyReply, answer: (tenant: Tenant) => unknown) => {
    const tenant = parseTenant(segment);
    if (tenant) return answer(tenant);
    const refused = aadsts.tenantNotFound(segment);
    return reply.code(refused.status).send(tokenErrorBody(refused, refusalIds(ctx.now())));
  };

  app.get<TenantParams>('/:tenant/discovery/v2.0/keys', async (req, reply) =>
    withTenant(req.params.tenant, reply, (tenant) =>
      reply.header('cache-control', 'max-age=86400, private').send(keySet(originOf(req), tenant)),
    ),
  );
  app.get<TenantParams>('/:tenant/v2.0/.well-known/openid-configuration', async (req, reply) =>
    withTenant(req.params.tenant, reply, (tenant) =>
      reply.header('cache-control', 'max-age=86400, private').send(discoveryDocument(originOf(req), tenant)),
    ),
  );

  // Graph's userinfo, for a token granted openid: the id token's pairwise `sub`; names need
  // `profile`, the address `email`.
  void app.register(async (graph) => {
    guardGraph(graph, ctx, state);
    graph.get('/oidc/userinfo', async (req) => {
      const user = requestUser(req);
      const token = req.headers.authorization?.slice('bearer '.length).trim() ?? '';
      const auth = state.current.grants.authenticate(token);
      const scopes = new Set(auth.ok ? auth.scopes : []);
      if (!scopes.has('openid'))
        throw graphErrors.accessDenied('The token was not issued for the openid scope.');
      const [givenName, ...familyNames] = user.displayName.split(' ');
      return {
        sub: pairwiseSubject(user, auth.ok ? auth.clientId : ''),
        ...(scopes.has('profile')
          ? { name: user.displayName, family_name: familyNames.join(' '), given_name: givenName ?? '' }
          : {}),
        ...(scopes.has('email') ? { email: user.mail } : {}),
      };
    });
  });
}
