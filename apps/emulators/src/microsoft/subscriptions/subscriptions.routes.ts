import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestClientId, requestUser } from '../graph-auth';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { Caller, StoredSubscription } from './subscriptions.store';

type IdParams = { id: string };

/** Graph's `/v1.0/subscriptions`: create (after the handshake), read, list, renew, delete, reauthorize. */
export function registerSubscriptionRoutes(app: FastifyInstance, state: MicrosoftStateRef): void {
  const base = '/v1.0/subscriptions';
  const callerOf = (req: FastifyRequest): Caller => ({
    user: requestUser(req),
    clientId: requestClientId(req),
  });
  const subscriptions = () => state.current.subscriptions;

  app.post(base, async (req, reply) => {
    const caller = callerOf(req);
    const prefer = String(req.headers.prefer ?? '');
    const immutableIds = /IdType\s*=\s*"?ImmutableId"?/i.test(prefer);
    const box = state.current.mailbox(caller.user.id);
    const created = await subscriptions().create(caller, box, req.body, immutableIds);
    return reply.code(201).send(renderSubscription(created));
  });

  app.get(base, async (req) => ({
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#subscriptions',
    value: subscriptions().list(callerOf(req)).map(renderSubscription),
  }));

  app.get<{ Params: IdParams }>(`${base}/:id`, async (req) =>
    renderSubscription(subscriptions().get(callerOf(req), req.params.id)),
  );

  app.patch<{ Params: IdParams }>(`${base}/:id`, async (req) =>
    renderSubscription(subscriptions().renew(callerOf(req), req.params.id, req.body)),
  );

  app.delete<{ Params: IdParams }>(`${base}/:id`, async (req, reply) => {
    subscriptions().delete(callerOf(req), req.params.id);
    return reply.code(204).send();
  });

  // A fresh token has been presented: nothing more to do, as the grant is checked per request.
  app.post<{ Params: IdParams }>(`${base}/:id/reauthorize`, async (req, reply) => {
    subscriptions().get(callerOf(req), req.params.id);
    return reply.code(204).send();
  });
}

/** A subscription as Graph returns it. */
export function renderSubscription(s: StoredSubscription) {
  return {
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#subscriptions/$entity',
    id: s.id,
    resource: s.resource,
    applicationId: s.clientId,
    changeType: s.changeTypes.join(','),
    clientState: s.clientState,
    notificationUrl: s.notificationUrl,
    notificationQueryOptions: null,
    lifecycleNotificationUrl: s.lifecycleNotificationUrl,
    expirationDateTime: new Date(s.expiresAt).toISOString(),
    creatorId: s.user.id,
    includeResourceData: null,
    latestSupportedTlsVersion: 'v1_2',
    encryptionCertificate: null,
    encryptionCertificateId: null,
    notificationUrlAppId: null,
  };
}
