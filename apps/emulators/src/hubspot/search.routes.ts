import type { FastifyInstance } from 'fastify';
import { authOf } from './data-plane.hooks';
import { validationError } from './errors';
import { renderRecord } from './record-view';
import { objectTypeOf } from './route-helpers';
import { parseSearchRequest, runSearch, SEARCH_LIMITS } from './search';

/** `POST /crm/v3/objects/{type}/search`: its own 5-per-second limit and no rate-limit headers. */
export function registerSearchRoutes(api: FastifyInstance): void {
  api.post<{ Params: { objectType: string } }>(
    '/crm/v3/objects/:objectType/search',
    { config: { hubspotLimit: 'search' } },
    async (req) => {
      const type = objectTypeOf(req.params.objectType);
      const { portal } = authOf(req);
      const parsed = parseSearchRequest(req.body);
      if (!parsed.ok) {
        const e = parsed.error;
        if (e.code === 'PAST_RESULT_LIMIT') {
          throw validationError(
            `Cannot page past ${SEARCH_LIMITS.maxResults} results (after=${e.after}). Narrow the search with filters and page again.`,
            { after: [String(e.after)] },
          );
        }
        throw validationError(e.message);
      }
      const request = parsed.value;
      const page = runSearch(portal.stores[type.name].all(), request, type.queryProperties);
      const body: { total: number; results: unknown[]; paging?: { next: { after: string } } } = {
        total: page.total,
        results: page.results.map((r) => renderRecord(portal, type, r, { properties: request.properties })),
      };
      if (page.nextAfter !== undefined) body.paging = { next: { after: page.nextAfter } };
      return body;
    },
  );
}
