import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Mailbox, MicrosoftStateRef } from './microsoft-state';
import type { MicrosoftUser } from './user.store';

/** Where each area's control routes for one user live: `${CONTROL_USERS}/:upn/…`. */
export const CONTROL_USERS = '/_emulator/microsoft/users';

export type UserParams = { upn: string };

/** How an evicted delta sync state is answered (invalidate-delta control routes). */
const invalidateBody = z.strictObject({
  /** Graph has answered an evicted sync state with both. */
  status: z.union([z.literal(400), z.literal(410)]).default(410),
  /** A 410 that carries a Location header: the initial request to start again from. */
  restart: z.boolean().default(false),
});

/** The user a control route's `:upn` names, or undefined once a 404 is on its way. */
export const controlUser =
  (state: MicrosoftStateRef) =>
  (req: FastifyRequest, reply: FastifyReply): MicrosoftUser | undefined => {
    const { upn } = req.params as UserParams;
    const user = state.current.users.byUpn(upn);
    if (!user) void reply.code(404).send({ error: `no Microsoft user ${upn}` });
    return user;
  };

/**
 * `POST ${CONTROL_USERS}/:upn/{area}/invalidate-delta` `{ status?, restart? }`: every delta sync
 * state of the user's area (calendar, mail or To Do) is evicted, answered as `status` says.
 */
export function registerInvalidateDelta(
  app: FastifyInstance,
  state: MicrosoftStateRef,
  area: keyof Mailbox,
): void {
  const userOf = controlUser(state);
  app.post<{ Params: UserParams }>(`${CONTROL_USERS}/:upn/${area}/invalidate-delta`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const parsed = invalidateBody.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply.code(400).send({ error: 'invalid request', issues: parsed.error.issues });
    state.current.mailbox(user.id)[area].invalidateDelta(parsed.data);
    return reply.code(204).send();
  });
}
