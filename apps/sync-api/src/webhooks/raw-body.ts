import type { Server } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

/** Routes under this prefix are authenticated by a signature over their body, byte for byte. */
export const WEBHOOK_PATH_PREFIX = '/webhooks/';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as received, on webhook routes only (set by the JSON parser below). */
    rawBody?: string;
  }
}

const isWebhook = (request: FastifyRequest): boolean => request.url.startsWith(WEBHOOK_PATH_PREFIX);

/**
 * Replaces the JSON parser: webhook routes get the body as a string (HubSpot signs the
 * exact bytes; a parse and re-serialise would break the signature, and a body that is not
 * JSON must be answered by the webhook's own 400, after its metric is counted); every
 * other route parses as before, with Fastify's own parser and its prototype-poisoning checks.
 * Text bodies are strings everywhere, as Fastify's own text parser gives them; on webhook
 * routes they are the raw body too (Microsoft Graph's validation handshake is a text/plain
 * POST, usually empty).
 */
export function useWebhookAwareJsonParser(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
  const parseJson = fastify.getDefaultJsonParser(
    onProtoPoisoning ?? 'error',
    onConstructorPoisoning ?? 'error',
  );
  app.useBodyParser<Server>('application/json', {}, (request, body, done) => {
    if (isWebhook(request)) {
      const raw = body.toString('utf8');
      request.rawBody = raw;
      done(null, raw);
      return;
    }
    parseJson(request, body.toString('utf8'), done);
  });
  app.useBodyParser<Server>('text/plain', {}, (request, body, done) => {
    const text = body.toString('utf8');
    if (isWebhook(request)) request.rawBody = text;
    done(null, text);
  });
}

/**
 * True when JSON text nests arrays and objects deeper than `max` (brackets inside strings are
 * text). One pass over the characters, without parsing: a body is measured before it is parsed.
 */
export function nestedDeeperThan(json: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
