import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/app-config';

/** Where `npm run web:build` writes the app, from this file (apps/sync-api/src/web). */
const DEFAULT_DIST = resolve(__dirname, '../../../web/dist');

/** Paths that are the API's, never the app's: an unknown one stays the API's JSON 404. */
const API_PREFIXES = ['/api/', '/webhooks/', '/healthz', '/readyz', '/docs', '/openapi', '/admin/queues'];

/**
 * The app's pages may load only their own scripts and styles, talk only to this origin (the API
 * and its event stream), and never be framed. Inline styles stay allowed: Mantine sets
 * positions and sizes in `style` attributes.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

const isApiPath = (url: string): boolean => {
  const path = url.split('?')[0] ?? url;
  return API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix));
};

/**
 * Serves the built web app from the API's own origin, so sessions, CSRF and the event stream
 * need no CORS: hashed assets with a year's cache (brotli or gzip where the build made them), and every other GET that is not the API's
 * (a page of the app: `/people/…`, `/sign-in/link`) answered with index.html, never cached, so
 * a deploy reaches the next navigation. Returns whether an app was found to serve.
 */
export async function serveWebApp(app: NestFastifyApplication, config: AppConfig): Promise<boolean> {
  const root = resolve(config.WEB_DIST_DIR ?? DEFAULT_DIST);
  if (!existsSync(resolve(root, 'index.html'))) return false;
  await app.register(fastifyStatic, {
    root,
    // Files are routed one by one at start (a build's files are fixed); the catch-all below is ours.
    wildcard: false,
    index: false,
    // The build writes .br and .gz beside each script and style (apps/web/vite.config.ts): a
    // browser that takes them gets about a quarter of the bytes, with no compression per request.
    preCompressed: true,
    setHeaders: (reply, path) => {
      reply.header(
        'cache-control',
        path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      reply.header('x-content-type-options', 'nosniff');
    },
  });
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    // The API's own unknown paths, and file names the build does not hold, stay a 404.
    const path = request.url.split('?')[0] ?? '/';
    if (isApiPath(request.url) || /\.[a-z0-9]+$/i.test(path)) return reply.callNotFound();
    return reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .sendFile('index.html', root);
  };
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get('/', page);
  fastify.get('/*', page);
  return true;
}
