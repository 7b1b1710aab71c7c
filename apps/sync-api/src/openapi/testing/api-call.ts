import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions } from 'fastify';
import { API_ERROR_CODES } from '../../common/api-errors';
import type { HttpMethod } from './openapi-operations';

export interface ApiRequest {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  /** Sent as is: a string or Buffer with its own content type, or an object as JSON. */
  payload?: string | Buffer | object;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, unknown>;
  /** The body; empty for an event stream, which is never read to its end. */
  text: string;
  /** The answer was a server-sent event stream, cut off once its status was known. */
  streamed: boolean;
}

const ANSWER_WITHIN_MS = 10_000;

/**
 * One request through `app.inject`. A response is taken as a stream, so that a long-lived
 * one (server-sent events) gives its status and is then cut off instead of hanging the suite.
 */
export async function send(app: NestFastifyApplication, request: ApiRequest): Promise<ApiResponse> {
  const abort = new AbortController();
  const options: InjectOptions = {
    method: request.method,
    url: request.url,
    headers: request.headers ?? {},
    payloadAsStream: true,
    signal: abort.signal,
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  };
  const res = await within(app.inject(options), `${request.method} ${request.url.slice(0, 200)}`, () =>
    abort.abort(),
  );
  const headers = res.headers as Record<string, unknown>;
  if (String(headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // Closing the response is what a client hanging up looks like to the handler.
    abort.abort();
    res.raw.res.destroy();
    return { status: res.statusCode, headers, text: '', streamed: true };
  }
  const chunks: Buffer[] = [];
  await within(
    (async () => {
      for await (const chunk of res.stream()) chunks.push(Buffer.from(chunk as Buffer));
    })(),
    `the body of ${request.method} ${request.url.slice(0, 200)}`,
    () => abort.abort(),
  );
  return { status: res.statusCode, headers, text: Buffer.concat(chunks).toString('utf8'), streamed: false };
}

async function within<T>(work: Promise<T>, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${what}`));
    }, ANSWER_WITHIN_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why a body is not `{ "error": { "code", "message" } }` with a known code, or null if it is. */
export function errorShapeProblem(text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 120))}`;
  }
  const keys = (value: unknown): string =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.keys(value).sort().join(',')
      : '';
  if (keys(body) !== 'error') return `not { error }: ${text.slice(0, 200)}`;
  const error = (body as { error: Record<string, unknown> }).error;
  if (keys(error) !== 'code,message') return `error is not { code, message }: ${text.slice(0, 200)}`;
  if (typeof error.message !== 'string') return `message is not a string: ${text.slice(0, 200)}`;
  if (!(API_ERROR_CODES as readonly unknown[]).includes(error.code))
    return `code ${JSON.stringify(error.code)} is not one of API_ERROR_CODES`;
  return null;
}

/** The error code of an error body, if it has one. */
export function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
