import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export interface GraphErrorBody {
  error: {
    code: string;
    message: string;
    innerError: { date: string; 'request-id': string; 'client-request-id': string };
  };
}

/** An error answered in Graph's `{ error: { code, message, innerError } }` shape. */
export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers (Retry-After on 429, Location on a 410 resync). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(clientRequestId?: string): GraphErrorBody {
    const requestId = randomUUID();
    return {
      error: {
        code: this.code,
        message: this.message,
        innerError: {
          date: new Date().toISOString().replace(/\.\d{3}Z$/, ''),
          'request-id': requestId,
          'client-request-id': clientRequestId ?? requestId,
        },
      },
    };
  }
}

/** The errors the emulator answers with, by Graph's code. */
export const graphErrors = {
  badRequest: (message: string) => new GraphError(400, 'BadRequest', message),
  invalidRequest: (message: string) => new GraphError(400, 'invalidRequest', message),
  malformedId: (id: string) =>
    new GraphError(400, 'ErrorInvalidIdMalformed', `Id is malformed: ${id.slice(0, 64)}`),
  unauthenticated: (message = 'Access token is empty.') =>
    new GraphError(401, 'InvalidAuthenticationToken', message),
  accessDenied: (message = 'Access is denied. Check credentials and try again.') =>
    new GraphError(403, 'ErrorAccessDenied', message),
  notFound: (message = 'The specified object was not found in the store.') =>
    new GraphError(404, 'ErrorItemNotFound', message),
  noRoute: (method: string, path: string) =>
    new GraphError(400, 'BadRequest', `Resource not found for the segment '${path}' (${method}).`),
  preconditionFailed: () =>
    new GraphError(
      412,
      'ErrorIrresolvableConflict',
      'The change key passed in the request does not match the current change key for the item.',
    ),
  /** A delta token the service no longer knows: start again from an initial delta call. */
  syncStateNotFound: (status: 400 | 410 = 410, location?: string) =>
    new GraphError(
      status,
      'syncStateNotFound',
      'The sync state generation is not found. Restart the sync without a delta token.',
      location === undefined ? {} : { location },
    ),
  throttled: (
    retryAfterSeconds: number,
    code: 'ApplicationThrottled' | 'MailboxConcurrency' = 'ApplicationThrottled',
  ) =>
    new GraphError(
      429,
      code,
      code === 'MailboxConcurrency'
        ? 'Application is over its MailboxConcurrency limit.'
        : 'Application is over its request limit.',
      { 'retry-after': String(retryAfterSeconds) },
    ),
  serviceUnavailable: () =>
    new GraphError(503, 'ServiceNotAvailable', 'The service is temporarily unavailable.', {
      'retry-after': '1',
    }),
};

/** Fastify's error handler for the Graph routes: GraphError as is, anything else as Graph would. */
export function graphErrorHandler(
  error: FastifyError | GraphError,
  req: FastifyRequest,
  reply: FastifyReply,
): void {
  const clientRequestId = req.headers['client-request-id'];
  const id = typeof clientRequestId === 'string' ? clientRequestId : undefined;
  if (error instanceof GraphError) {
    void reply.code(error.status).headers(error.headers).send(error.body(id));
    return;
  }
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  const graph =
    status < 500
      ? graphErrors.badRequest(error.message)
      : new GraphError(500, 'generalException', 'An unexpected error occurred.');
  void reply.code(graph.status).send(graph.body(id));
}
