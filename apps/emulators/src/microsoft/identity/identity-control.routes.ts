import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorContext } from '../../common/context';
import type { MicrosoftStateRef } from '../microsoft-state';

const userBody = z.strictObject({
  userPrincipalName: z.email(),
  displayName: z.string().min(1).optional(),
  tenantId: z.uuid().optional(),
});

const userChanges = z.strictObject({
  userPrincipalName: z.email().optional(),
  displayName: z.string().min(1).optional(),
});

const appBody = z.strictObject({
  displayName: z.string().min(1).optional(),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  redirectUris: z.array(z.url()).default([]),
});

const grantBody = z.strictObject({
  clientId: z.string().min(1),
  scopes: z.array(z.string().min(1)).default(['offline_access', 'User.Read', 'Calendars.ReadWrite']),
});

const failBody = z.strictObject({
  reason: z.enum(['revoked', 'expired', 'no-consent']),
  clientId: z.string().min(1).optional(),
});

/**
 * The Microsoft emulator's control routes for people and apps: a user (a mailbox in a
 * tenant) and a change of their sign-in name, an app registration, a grant issued without
 * the consent pages (a test's shortcut), a grant failing (revoked, expired, consent
 * withdrawn) and access tokens expiring.
 */
export function registerIdentityControlRoutes(
  app: FastifyInstance,
  _ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  app.post('/_emulator/microsoft/users', async (req, reply) => {
    const parsed = userBody.safeParse(req.body);
    if (!parsed.success) return reply.code(400).send({ error: 'invalid user', issues: parsed.error.issues });
    return reply.code(201).send(state.current.users.add(parsed.data));
  });

  app.get('/_emulator/microsoft/users', async () => state.current.users.list());

  app.patch<{ Params: { upn: string } }>('/_emulator/microsoft/users/:upn', async (req, reply) => {
    const user = state.current.users.byUpn(req.params.upn);
    if (!user) return reply.code(404).send({ error: `no user ${req.params.upn}` });
    const parsed = userChanges.safeParse(req.body);
    if (!parsed.success) return reply.code(400).send({ error: 'invalid user', issues: parsed.error.issues });
    const updated = state.current.users.update(user.id, parsed.data);
    if (updated === 'taken')
      return reply.code(409).send({ error: `${parsed.data.userPrincipalName} is taken` });
    return updated;
  });

  // The emulator's own app, which any local redirect URI may use (the demo's and the tests' API).
  app.get('/_emulator/microsoft/oauth-client', async () => {
    const { clientId, clientSecret } = state.current.apps.builtIn;
    return { clientId, clientSecret };
  });

  app.post('/_emulator/microsoft/apps', async (req, reply) => {
    const parsed = appBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid app', issues: parsed.error.issues });
    return reply.code(201).send(state.current.apps.register(parsed.data));
  });

  app.post<{ Params: { upn: string } }>('/_emulator/microsoft/users/:upn/grants', async (req, reply) => {
    const user = state.current.users.byUpn(req.params.upn);
    if (!user) return reply.code(404).send({ error: `no user ${req.params.upn}` });
    const parsed = grantBody.safeParse(req.body);
    if (!parsed.success) return reply.code(400).send({ error: 'invalid grant', issues: parsed.error.issues });
    if (!state.current.apps.get(parsed.data.clientId))
      return reply.code(404).send({ error: `no app ${parsed.data.clientId}` });
    return reply
      .code(201)
      .send(state.current.grants.issue(user.id, parsed.data.clientId, parsed.data.scopes));
  });

  app.post<{ Params: { upn: string } }>('/_emulator/microsoft/users/:upn/grants/fail', async (req, reply) => {
    const user = state.current.users.byUpn(req.params.upn);
    if (!user) return reply.code(404).send({ error: `no user ${req.params.upn}` });
    const parsed = failBody.safeParse(req.body);
    if (!parsed.success)
      return reply.code(400).send({ error: 'invalid failure', issues: parsed.error.issues });
    state.current.grants.fail(user.id, parsed.data.reason, parsed.data.clientId);
    return reply.code(204).send();
  });

  app.post<{ Params: { upn: string } }>(
    '/_emulator/microsoft/users/:upn/grants/expire-access',
    async (req, reply) => {
      const user = state.current.users.byUpn(req.params.upn);
      if (!user) return reply.code(404).send({ error: `no user ${req.params.upn}` });
      state.current.grants.expireAccess(user.id);
      return reply.code(204).send();
    },
  );
}
