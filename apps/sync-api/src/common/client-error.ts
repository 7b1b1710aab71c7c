import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiErrorBody, ApiErrorCode } from './api-errors';

/** What Node's HTTP parser refused, by its error code; anything else it cannot read is a 400. */
const REFUSALS: Record<string, [status: number, code: ApiErrorCode, message: string]> = {
  // The request line (the URL with its query) and the headers together, past Node's limit (16 KiB).
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'the URL and headers are larger than this server reads'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'the request did not arrive in time'],
};

/**
 * Answers a request that Node's HTTP parser refused, before Fastify or Nest saw it, in the
 * API's error shape (Fastify's own answer is `{ error, message, statusCode }`). As Node and
 * Fastify do, the answer is written straight to the socket, which is then closed: what
 * follows on it cannot be read.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] = REFUSALS[error.code ?? ''] ?? [
    400,
    'bad_request',
    'not an HTTP request this server can read',
  ];
  const body = JSON.stringify({ error: { code, message } } satisfies ApiErrorBody);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}
