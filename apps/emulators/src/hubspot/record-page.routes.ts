import type { FastifyInstance } from 'fastify';
import type { HubspotState } from './hubspot-state';
import { resolveObjectType } from './object-types';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/**
 * HubSpot's record page as a person opens it (`/contacts/{portalId}/record/{objectTypeId}/{id}`,
 * the same path for every object type): here a read-only table of the record's properties,
 * so a source link in the app opens something real in the demo.
 */
export function registerRecordPageRoutes(app: FastifyInstance, state: HubspotState): void {
  app.get('/contacts/:portalId/record/:objectType/:id', async (req, reply) => {
    const { portalId, objectType, id } = req.params as { portalId: string; objectType: string; id: string };
    const portal = state.portals.get(Number(portalId));
    const def = resolveObjectType(objectType);
    const record = portal && def ? portal.stores[def.name].get(id) : undefined;
    if (!portal || !def || !record) {
      return reply
        .code(404)
        .type('text/html')
        .send(
          '<!doctype html><html lang="en"><title>Not found - HubSpot (emulator)</title><h1>Record not found</h1></html>',
        );
    }
    const rows = [...record.properties.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`,
      )
      .join('');
    const title = `${def.singular} ${id} - portal ${portal.portalId}`;
    return reply
      .type('text/html')
      .send(`<!doctype html><html lang="en"><head><title>${escapeHtml(title)} - HubSpot (emulator)</title></head><body>
<main><h1>${escapeHtml(title)}</h1><table><caption>Properties</caption>${rows}</table></main></body></html>`);
  });
}
