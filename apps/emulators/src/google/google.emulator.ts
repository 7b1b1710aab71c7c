import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import type { EmulatedProvider, EmulatorContext } from '../common/context';
import { acceptEmptyJson } from '../common/json-body';
import { registerCalendarRoutes } from './calendar.routes';
import { logRequests } from './data-plane.hooks';
import { registerGmailRoutes } from './gmail.routes';
import { registerGoogleControlRoutes } from './google-control.routes';
import { googleErrorHandler, googleErrors } from './google-errors';
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
  acceptEmptyJson(app, (message) =>
    googleErrors.parseError(`Invalid JSON payload received. ${message}`.trim()),
  );
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
