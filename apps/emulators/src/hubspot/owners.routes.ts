import type { FastifyInstance } from 'fastify';
import { authOf } from './data-plane.hooks';
import { notFoundError } from './errors';
import { intParam, queryFlag } from './route-helpers';

type OwnersQuery = { email?: string; after?: string; limit?: string; archived?: string };

/** `GET /crm/v3/owners` and `GET /crm/v3/owners/{id}`: the portal's seeded owners. */
export function registerOwnerRoutes(api: FastifyInstance): void {
  api.get<{ Querystring: OwnersQuery }>('/crm/v3/owners', async (req) => {
    const { portal } = authOf(req);
    const archived = queryFlag(req.query.archived);
    const email = req.query.email?.toLowerCase();
    const owners = portal.owners.filter((o) => o.archived === archived && (!email || o.email === email));
    const limit = Math.max(1, Math.min(intParam(req.query.limit, 'limit', 100), 500));
    const offset = intParam(req.query.after, 'after', 0);
    const body: { results: unknown[]; paging?: { next: { after: string } } } = {
      results: owners.slice(offset, offset + limit),
    };
    if (offset + limit < owners.length) body.paging = { next: { after: String(offset + limit) } };
    return body;
  });

  api.get<{ Params: { ownerId: string }; Querystring: { idProperty?: string; archived?: string } }>(
    '/crm/v3/owners/:ownerId',
    async (req) => {
      const { portal } = authOf(req);
      const byUserId = req.query.idProperty === 'userId';
      const owner = portal.owners.find((o) =>
        byUserId ? String(o.userId) === req.params.ownerId : o.id === req.params.ownerId,
      );
      if (!owner || owner.archived !== queryFlag(req.query.archived)) throw notFoundError();
      return owner;
    },
  );
}
