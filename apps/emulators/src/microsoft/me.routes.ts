import type { FastifyInstance } from 'fastify';
import { requestUser } from './graph-auth';
import { PERSONAL_TENANT } from './user.store';

/**
 * Who the token is for, as Graph says: `GET /me` (the user: `id` is the object id, `oid` in
 * id tokens) and `GET /organization` (the tenant: `id` is `tid`). Both need User.Read
 * (graph-scopes.ts). A personal account has no organization: Graph answers an empty list.
 */
export function registerMeRoutes(graph: FastifyInstance): void {
  graph.get('/v1.0/me', async (req) => {
    const user = requestUser(req);
    const [givenName, ...surnames] = user.displayName.split(' ');
    return {
      '@odata.context': `https://${req.headers.host ?? 'localhost'}/v1.0/$metadata#users/$entity`,
      id: user.id,
      userPrincipalName: user.userPrincipalName,
      displayName: user.displayName,
      givenName: givenName ?? null,
      surname: surnames.length > 0 ? surnames.join(' ') : null,
      mail: user.mail,
      businessPhones: [],
      jobTitle: null,
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: null,
    };
  });
  graph.get('/v1.0/organization', async (req) => {
    const user = requestUser(req);
    const organizations =
      user.tenantId.toLowerCase() === PERSONAL_TENANT
        ? []
        : [{ id: user.tenantId, displayName: `${user.userPrincipalName.split('@')[1] ?? 'tenant'}` }];
    return {
      '@odata.context': `https://${req.headers.host ?? 'localhost'}/v1.0/$metadata#organization`,
      value: organizations,
    };
  });
}
