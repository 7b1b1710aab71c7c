import { MERGE_RESOURCES } from '../../identity-review/identity-review.schemas';
import { RECORD_RESOURCES } from '../../records/records.schemas';

/**
 * The routes the generic suites treat apart, as `METHOD /path` of the OpenAPI document.
 * isolation.int-spec.ts checks every list against the document, both ways.
 */

/**
 * Called by a provider or a browser and authenticated by a signature, channel token or OAuth state: no API key.
 * The sign-in redirects are here too: the browser opens them, and they answer every request with a 302.
 */
export const OTHER_AUTH = [
  'POST /webhooks/hubspot',
  'POST /webhooks/google-calendar',
  'POST /webhooks/gmail',
  'POST /webhooks/microsoft-calendar',
  'POST /webhooks/microsoft-mail',
  'POST /webhooks/microsoft-todo',
  'GET /api/v1/connections/oauth/{provider}/callback',
  'GET /api/v1/auth/oidc/start',
  'GET /api/v1/auth/oidc/callback',
];
/**
 * Accept a body only with credentials the provider itself recognises as the account's (the
 * connection's account is proven by asking it), which no generator can invent: a generated body
 * that passes validation gets as far as the provider's refusal (PROVIDER_REFUSALS).
 */
export const PROVIDER_PROVEN = ['POST /api/v1/connections', 'PUT /api/v1/connections/{id}/credentials'];
/**
 * The 400s the API answers only after it asked the provider about an account: credentials it
 * refused or that open another account, or a property a connection's portal lacks.
 */
export const PROVIDER_REFUSALS: readonly (string | undefined)[] = [
  'credentials_refused',
  'account_mismatch',
  'account_unproven',
  'unknown_property',
];
/**
 * Routes of a browser session: a key is refused them (401 with a Bearer key), so the fuzz calls
 * them with a signed-in admin's cookie, CSRF token and Origin.
 */
export const SESSION_ONLY = ['GET /api/v1/auth/session', 'POST /api/v1/auth/sign-out'];
/** Accept only a secret the API mailed or printed itself (a sign-in link's token), which no generator can invent. */
export const SECRET_INPUT = ['POST /api/v1/auth/magic-link/consume'];
/** Open to anyone (probes, what the sign-in page offers, asking for and spending a sign-in link). */
export const PUBLIC = [
  'GET /healthz',
  'GET /readyz',
  'GET /api/v1/auth/providers',
  'POST /api/v1/auth/magic-link',
  'POST /api/v1/auth/magic-link/consume',
];
/**
 * Writes a salesperson may make. Any other write must document 403 (admin only), so that a
 * new write route is a deliberate choice rather than open to every key by default.
 */
export const SALES_WRITES = [
  ...Object.keys(RECORD_RESOURCES).map((resource) => `PATCH /api/v1/${resource}/{id}`),
  'POST /api/v1/conflicts/{id}/resolve',
  // Identity review: a salesperson merges, unmerges and dismisses suggested duplicates.
  ...MERGE_RESOURCES.map((resource) => `POST /api/v1/${resource}/{id}/merge`),
  'POST /api/v1/identity-operations/{operationId}/unmerge',
  'POST /api/v1/possible-duplicates/{id}/dismiss',
  // Anyone signed in signs out (a key has no session: 401).
  'POST /api/v1/auth/sign-out',
];
/**
 * Routes that end the row they address for good (a disconnect stops a connection forever):
 * the generic suites run them after every other route, which then find A's rows as seeded.
 * In this order: a mappings PUT, an enable ends a dry run (whose report runs before), a disconnect ends all.
 */
export const RUN_LAST = [
  // Replaces the custom fields the seed maps (which record edits and policies name): after those.
  'PUT /api/v1/connections/{id}/mappings',
  'POST /api/v1/connections/{id}/enable',
  'DELETE /api/v1/connections/{id}',
];

/** The operations in the order the generic suites run them: RUN_LAST at the end, in its order. */
export const inRunOrder = <T extends { key: string }>(operations: readonly T[]): T[] => [
  ...operations.filter((op) => !RUN_LAST.includes(op.key)),
  ...RUN_LAST.flatMap((key) => operations.filter((op) => op.key === key)),
];
