import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EmulatedProvider, EmulatorContext } from '../common/context';
import { acceptEmptyJson } from '../common/json-body';
import { registerBatchRoutes } from './batch/batch.routes';
import { registerCalendarRoutes } from './calendar/calendar.routes';
import { registerCalendarControlRoutes } from './calendar/calendar-control.routes';
import { guardGraph, logGraphRequests } from './graph-auth';
import { graphErrorHandler, graphErrors } from './graph-errors';
import { registerIdentityRoutes } from './identity/identity.routes';
import { registerIdentityControlRoutes } from './identity/identity-control.routes';
import { registerMailRoutes } from './mail/mail.routes';
import { registerMailControlRoutes } from './mail/mail-control.routes';
import { registerMeRoutes } from './me.routes';
import { MicrosoftState, type MicrosoftStateRef } from './microsoft-state';
import { registerSubscriptionRoutes } from './subscriptions/subscriptions.routes';
import { registerSubscriptionControlRoutes } from './subscriptions/subscriptions-control.routes';
import { registerThrottlingControlRoutes } from './throttling/throttling-control.routes';
import { emulatorCa, serverCertificate } from './tls';
import { registerTodoRoutes } from './todo/todo.routes';
import { registerTodoChildRoutes } from './todo/todo-children.routes';
import { registerTodoControlRoutes } from './todo/todo-control.routes';

/**
 * Microsoft 365 (Microsoft Graph v1.0 and the identity platform v2.0) on one HTTPS port at
 * the real paths: `Client.init({ baseUrl: 'https://localhost:PORT', customHosts })` of the
 * official SDK, and the identity platform's `/{tenant}/oauth2/v2.0/*`, work unchanged. The
 * certificate is signed by the emulator's own authority (tls.ts). State is in memory.
 */
export async function createMicrosoftEmulator(ctx: EmulatorContext): Promise<EmulatedProvider> {
  const https = await serverCertificate(await emulatorCa());
  const app = Fastify({ logger: false, https }) as unknown as FastifyInstance;
  let current = new MicrosoftState(ctx);
  const state: MicrosoftStateRef = {
    get current() {
      return current;
    },
  };

  void app.register(formbody);
  acceptEmptyJson(app, () => graphErrors.badRequest('Unable to read JSON request payload.'));
  app.setErrorHandler(graphErrorHandler);
  app.setNotFoundHandler((req, reply) => {
    const error = graphErrors.noRoute(req.method, req.url.split('?')[0] ?? req.url);
    void reply.code(error.status).send(error.body());
  });
  logGraphRequests(app, ctx);

  registerIdentityRoutes(app, ctx, state);
  registerIdentityControlRoutes(app, ctx, state);
  registerCalendarControlRoutes(app, ctx, state);
  registerMailControlRoutes(app, ctx, state);
  registerTodoControlRoutes(app, ctx, state);
  registerSubscriptionControlRoutes(app, state);
  registerThrottlingControlRoutes(app, state);
  // Graph's own routes in a scope of their own, so the token guard covers only them.
  void app.register(async (graph) => {
    guardGraph(graph, ctx, state);
    registerMeRoutes(graph);
    registerCalendarRoutes(graph, ctx, state);
    registerMailRoutes(graph, ctx, state);
    registerTodoRoutes(graph, ctx, state);
    registerTodoChildRoutes(graph, ctx, state);
    registerSubscriptionRoutes(graph, state);
    registerBatchRoutes(graph, app);
  });

  return {
    app,
    reset: () => {
      current.dispose();
      current = new MicrosoftState(ctx);
    },
    close: async () => {
      current.dispose();
      await app.close();
    },
  };
}
