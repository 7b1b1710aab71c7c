import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import { REDACT_PATHS } from '@syncline/core';
import type { Params } from 'nestjs-pino';
import type { DestinationStream, Level } from 'pino';
import type { AppConfig } from '../config/app-config';

// Secrets that arrive where the shared list does not look: a Calendar channel's token
// header, a push URL's `?token=` (Gmail's Pub/Sub push endpoint), an OAuth callback's
// `code` and `state`, and a key someone put in a query string.
const SECRET_PARAMS = ['token', 'key', 'secret', 'access_token', 'code', 'state'];
const API_REDACT_PATHS = [
  ...REDACT_PATHS,
  'req.headers["x-goog-channel-token"]',
  ...SECRET_PARAMS.map((p) => `req.query.${p}`),
];
const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_PARAMS.join('|')})=)[^&#]*`, 'gi');

// Probes and scrapes arrive every few seconds and say nothing worth a log line.
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * nestjs-pino settings: one JSON line per request, with its id (Fastify's, see
 * request-id.ts), and secrets redacted.
 */
export function loggerParams(config: AppConfig, destination?: DestinationStream): Params {
  const options = {
    name: 'sync-api',
    level: config.LOG_LEVEL,
    redact: { paths: API_REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: { url?: string }) => {
        if (typeof req.url === 'string') req.url = req.url.replace(SECRET_QUERY, '$1[redacted]');
        return req;
      },
    },
    customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error): Level => {
      if (error || response.statusCode >= 500) return 'error';
      return response.statusCode >= 400 ? 'warn' : 'info';
    },
    autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.has(request.url?.split('?')[0] ?? '') },
  };
  return {
    pinoHttp: destination ? [options, destination] : options,
    // nestjs-pino's default route, '{/*splat}', matches nothing on @nestjs/platform-fastify
    // 12.5, which silently drops both the request logs and the request context.
    forRoutes: [{ path: '/{*splat}', method: RequestMethod.ALL }],
    // The tenant and key that the guard assigns also go on the request's completion line.
    assignResponse: true,
  };
}
