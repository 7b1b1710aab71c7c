import type { FastifyInstance } from 'fastify';

/**
 * The providers' SDKs send `Content-Type: application/json` on bodiless calls (DELETEs, some
 * GETs); Fastify's own parser would refuse those. An empty JSON body is no body, and a
 * malformed one is answered with the provider's own error (`refuse`), not Fastify's.
 */
export function acceptEmptyJson(app: FastifyInstance, refuse: (parseMessage: string) => Error): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(refuse(error instanceof Error ? error.message : String(error)), undefined);
    }
  });
}
