import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EmulatedProvider, EmulatorContext } from '../common/context';
import { registerCalendarRoutes } from './calendar.routes';
import { logRequests } from './data-plane.hooks';
import { registerGmailRoutes } from './gmail.routes';
import { registerGoogleControlRoutes } from './google-control.routes';
import { GoogleApiError, googleErrorHandler, googleErrors } from './google-errors';
import { GoogleState, type GoogleStateRef } from './google-state';
import { registerOAuthRoutes } from './oauth.routes';
import { PushDispatcher } from './push.dispatcher';
import { registerTasksRoutes } from './tasks.routes';

/**
 * Google (Calendar v3, Gmail v1, Tasks v1, OAuth) on one port at the real paths, so
 * googleapis pointed at `rootUrl: http://host:port/` works unchanged. State is in memory.
 */
export function createGoogleEmulator(ctx: EmulatorContext): EmulatedProvider {
  const app = Fastify({ logger: false });
  const dispatcher = new PushDispatcher(ctx.faults, () => ctx.now());
  let current = new GoogleState(ctx, dispatcher);
  const state: GoogleStateRef = {
    get current() {
      return current;
    },
  };

  void app.register(formbody);
  acceptEmptyJson(app);
  app.setErrorHandler(googleErrorHandler);
  app.setNotFoundHandler((req, reply) => {
    const error = googleErrors.notFound(`No such method: ${req.method} ${req.url.split('?')[0]}`);
    void reply.code(404).send(error.body());
  });
  logRequests(app, ctx);

  registerOAuthRoutes(app, ctx, state);
  registerGoogleControlRoutes(app, state, dispatcher);
  // Each API in its own scope, so its auth and quota hook guards only its routes.
  void app.register(async (scope) => registerCalendarRoutes(scope, ctx, state));
  void app.register(async (scope) => registerGmailRoutes(scope, ctx, state));
  void app.register(async (scope) => registerTasksRoutes(scope, ctx, state));

  const forget = () => {
    current.dispose();
    dispatcher.reset();
  };
  return {
    app,
    reset: () => {
      forget();
      current = new GoogleState(ctx, dispatcher);
    },
    close: async () => {
      forget();
      await app.close();
    },
  };
}

/**
 * googleapis sends `Content-Type: application/json` on some bodiless calls; Fastify's own
 * parser would refuse those. Bad JSON gets Google's parseError.
 */
function acceptEmptyJson(app: FastifyInstance): void {
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
      const parseError: GoogleApiError = googleErrors.parseError(
        `Invalid JSON payload received. ${error instanceof Error ? error.message : ''}`.trim(),
      );
      done(parseError, undefined);
    }
  });
}
