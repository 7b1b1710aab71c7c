import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
// A caller's request id is kept (to follow a request across services) only if it is tame:
// it ends up in every log line of the request.
const TAME_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Fastify's request id generator. The id reaches the logs through pino-http, which reads
 * the one Fastify put on the raw request, so there is a single id per request.
 */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && TAME_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Answers every request with its id, so a caller can quote it. */
export function echoRequestId(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}
