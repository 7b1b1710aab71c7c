import formbody from '@fastify/formbody';
import Fastify, { type FastifyError } from 'fastify';
import type { EmulatedProvider, EmulatorContext } from '../common/context';
import { acceptEmptyJson } from '../common/json-body';
import { registerAccountInfoRoutes } from './account-info.routes';
import { registerAssociationRoutes } from './associations.routes';
import { registerBatchRoutes } from './batch.routes';
import { registerDataPlaneGate } from './data-plane.hooks';
import { HubspotHttpError, validationError } from './errors';
import { registerHubspotControlRoutes } from './hubspot-control.routes';
import { type HubspotEmulatorOptions, HubspotState } from './hubspot-state';
import { registerOauthRoutes } from './oauth.routes';
import { registerObjectRoutes } from './objects.routes';
import { registerOwnerRoutes } from './owners.routes';
import { registerPropertyRoutes } from './properties.routes';
import { registerRecordPageRoutes } from './record-page.routes';
import { registerSearchRoutes } from './search.routes';
import { registerSecondaryEmailRoutes } from './secondary-email.routes';

export type { HubspotEmulatorOptions } from './hubspot-state';

/**
 * The HubSpot emulator: CRM v3 objects, search, batch, v4 associations, owners, OAuth and
 * webhooks for any number of portals, plus its control routes under `/_emulator/hubspot`.
 */
export function createHubspotEmulator(
  ctx: EmulatorContext,
  options: HubspotEmulatorOptions = {},
): EmulatedProvider {
  const state = new HubspotState(ctx, options);
  const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
  const now = () => ctx.now();

  app.decorateRequest('hubspotAuth', null);
  app.decorateRequest('hubspotAccount', null);

  acceptEmptyJson(app, (message) => validationError(`Invalid input JSON: ${message}`));
  void app.register(formbody);

  // Every error leaves as HubSpot's JSON body; the SDK cannot read anything else.
  app.setErrorHandler((error: FastifyError | HubspotHttpError, _req, reply) => {
    const known =
      error instanceof HubspotHttpError
        ? error
        : error.statusCode !== undefined && error.statusCode < 500
          ? new HubspotHttpError(error.statusCode, { message: error.message, category: 'VALIDATION_ERROR' })
          : new HubspotHttpError(500, { message: error.message, category: 'INTERNAL_ERROR' });
    const { status, message, category, ...rest } = known.body;
    return reply
      .code(known.statusCode)
      .headers(known.headers)
      .send({ status: status ?? 'error', message, correlationId: state.correlationId(), category, ...rest });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({
      status: 'error',
      message: `Unable to route ${req.method} ${req.url.split('?')[0]}`,
      correlationId: state.correlationId(),
      category: 'OBJECT_NOT_FOUND',
    }),
  );

  // Every data-plane request goes to the shared request log (path with its query, as
  // the Google emulator logs it); control routes do not.
  app.addHook('onResponse', async (req, reply) => {
    if (req.url.startsWith('/_emulator')) return;
    ctx.requests.record({
      at: new Date(ctx.now()).toISOString(),
      service: 'hubspot',
      method: req.method,
      path: req.url,
      status: reply.statusCode,
      account: req.hubspotAccount,
    });
  });

  registerHubspotControlRoutes(app, state);
  registerOauthRoutes(app, state);
  registerRecordPageRoutes(app, state);
  void app.register(async (api) => {
    registerDataPlaneGate(api, state);
    registerObjectRoutes(api);
    registerBatchRoutes(api, now);
    registerSearchRoutes(api);
    registerAssociationRoutes(api, now);
    registerOwnerRoutes(api);
    registerPropertyRoutes(api, now);
    registerSecondaryEmailRoutes(api);
    registerAccountInfoRoutes(api);
  });

  return {
    app,
    reset: () => state.reset(),
    close: async () => {
      state.webhooks.reset();
      await app.close();
    },
  };
}
