import { RECORD_RESOURCES } from '../../records/records.schemas';

/**
 * The routes the generic suites treat apart, as `METHOD /path` of the OpenAPI document.
 * isolation.int-spec.ts checks every list against the document, both ways.
 */

/** Called by a provider or a browser and authenticated by a signature, channel token or OAuth state: no API key. */
export const OTHER_AUTH = [
  'POST /webhooks/hubspot',
  'POST /webhooks/google-calendar',
  'POST /webhooks/gmail',
  'GET /api/v1/connections/oauth/{provider}/callback',
];
/** Open to anyone (probes). */
export const PUBLIC = ['GET /healthz', 'GET /readyz'];
/**
 * Writes a salesperson may make. Any other write must document 403 (admin only), so that a
 * new write route is a deliberate choice rather than open to every key by default.
 */
export const SALES_WRITES = [
  ...Object.keys(RECORD_RESOURCES).map((resource) => `PATCH /api/v1/${resource}/{id}`),
  'POST /api/v1/conflicts/{id}/resolve',
];
