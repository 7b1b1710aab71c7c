import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import { isSecretParamName, REDACT_PATHS, REDACTION_OPTIONS, redactSecretQueryParams } from '@syncline/core';
import type { Params } from 'nestjs-pino';
import {
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type Level,
  type Logger,
  levels,
  pino,
} from 'pino';
import type { AppConfig } from '../config/app-config';

// A secret that arrives where the shared list does not look: a Calendar channel's token
// header. Query strings (a push URL's `?token=`, an OAuth callback's `code` and `state`, a
// key someone put there) are redacted by name, in the URL and the parsed query alike.
const API_REDACT_PATHS = [
  ...REDACT_PATHS,
  'req.headers["x-goog-channel-token"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
];

// Probes arrive every few seconds and say nothing worth a log line (metrics have a port of their own).
const QUIET_PATHS = new Set(['/healthz', '/readyz']);

/** The parsed query with the value of each secret parameter (see isSecretParamName) redacted. */
function redactedQuery(query: object): object {
  const entries = Object.entries(query);
  if (!entries.some(([name]) => isSecretParamName(name))) return query;
  return Object.fromEntries(
    entries.map(([name, value]) => [name, isSecretParamName(name) ? REDACTION_OPTIONS.redact.censor : value]),
  );
}

/** Where a request's logger keeps the tenant and key it acts for (see `tagRequestLog`). */
const TENANT = Symbol('syncline.request-tenant');
/** Where a request's logger keeps the bindings it writes only with a line (see `requestChild`). */
const LAZY = Symbol('syncline.lazy-bindings');

type Tagged = { [TENANT]?: RequestActorFields; [LAZY]?: Bindings };

/** The tenant and the actor of a request: its API key or its signed-in member. */
export type RequestActorFields = { workspaceId: string; apiKeyId?: string; memberId?: string };

/** What a line of a request's logger adds: its lazy bindings, and the tenant once tagged. */
function requestFields(logger: Tagged): object {
  return { ...logger[LAZY], ...logger[TENANT] };
}

/** The bindings pino-http gives the loggers it makes for each request. */
const REQUEST_BINDINGS = new Set(['reqId', 'req']);

/**
 * The loggers pino-http makes for each request, `child({ reqId })` and `child({ req })`,
 * made without binding: a binding is serialized at once and goes through every redaction
 * path (the wildcard ones included), which measured over a tenth of the API's time on a get
 * (bench api-read), for lines that are seldom written. The bindings are kept on the logger
 * and written, serialized and redacted, by the mixin with a line; every other child is
 * pino's own (and inherits them).
 */
function requestChild(root: Logger): Logger {
  const child = root.child as unknown as (
    this: Logger,
    bindings: Bindings,
    options?: ChildLoggerOptions,
  ) => Logger;
  const onlyRequestKey = (bindings: Bindings): boolean => {
    let keys = 0;
    for (const key in bindings) if (++keys > 1 || !REQUEST_BINDINGS.has(key)) return false;
    return keys === 1;
  };
  root.child = function (this: Logger & Tagged, bindings: Bindings, options?: ChildLoggerOptions) {
    if (options !== undefined || !onlyRequestKey(bindings)) return child.call(this, bindings, options);
    const logger = Object.create(this) as Logger & Tagged;
    logger[LAZY] = this[LAZY] ? { ...this[LAZY], ...bindings } : bindings;
    return logger;
  } as unknown as Logger['child'];
  return root;
}

/**
 * Every later line of the current request, its completion line included, names this tenant
 * and key. The fields are kept on the request's logger and put on a line only when one is
 * written (the logger's mixin): binding them as a child logger would serialize and redact
 * them on every request.
 */
export function tagRequestLog(request: IncomingMessage, fields: RequestActorFields): void {
  // pino-http's logger of this request, the last it lists (`request.log` can be Fastify's own,
  // which every request shares).
  const logger = (request as { allLogs?: object[] }).allLogs?.at(-1);
  if (logger) (logger as Tagged)[TENANT] = fields;
}

/**
 * nestjs-pino settings: one JSON line per request, with its id (Fastify's, see
 * request-id.ts), and secrets redacted.
 *
 * The request goes on the completion line only, and only when that line is written (see
 * `requestChild`). Lines a request's handlers write carry its id (and, once the guard has
 * tagged them, its workspace and key). A line below the configured level is not built.
 */
export function loggerParams(config: AppConfig, destination?: DestinationStream): Params {
  const threshold = levels.values[config.LOG_LEVEL] ?? levels.values.info!;
  const rootOptions = {
    name: 'sync-api',
    level: config.LOG_LEVEL,
    ...REDACTION_OPTIONS,
    redact: { paths: API_REDACT_PATHS, censor: REDACTION_OPTIONS.redact.censor },
    // Child loggers inherit the lazy bindings and the tag through their prototype.
    mixin: (_object: object, _level: number, logger: object) => requestFields(logger as Tagged),
  };
  const root = requestChild(destination ? pino(rootOptions, destination) : pino(rootOptions));
  const options = {
    logger: root,
    serializers: {
      // The serialized copy of the request, never the request itself.
      req: (req: { url?: string; query?: unknown }) => {
        if (typeof req.url === 'string') req.url = redactSecretQueryParams(req.url);
        if (typeof req.query === 'object' && req.query !== null) req.query = redactedQuery(req.query);
        return req;
      },
    },
    quietReqLogger: true,
    quietResLogger: true,
    customSuccessObject: (request: IncomingMessage, _response: ServerResponse, value: object) => ({
      req: request,
      ...value,
    }),
    customErrorObject: (
      request: IncomingMessage,
      _response: ServerResponse,
      _error: Error,
      value: object,
    ) => ({
      req: request,
      ...value,
    }),
    customLogLevel: (
      _request: IncomingMessage,
      response: ServerResponse,
      error?: Error,
    ): Level | 'silent' => {
      const level =
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info';
      return levels.values[level]! >= threshold ? level : 'silent';
    },
    autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.has(request.url?.split('?')[0] ?? '') },
  };
  return {
    pinoHttp: options,
    // nestjs-pino's default route, '{/*splat}', matches nothing on @nestjs/platform-fastify
    // 12.5, which silently drops both the request logs and the request context.
    forRoutes: [{ path: '/{*splat}', method: RequestMethod.ALL }],
    // Fields a handler assigns (the OAuth callback's tenant and key, which no guard names)
    // also go on the request's completion line.
    assignResponse: true,
  };
}
