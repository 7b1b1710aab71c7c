import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorContext } from '../../common/context';
import { CONTROL_USERS, controlUser, registerInvalidateDelta, type UserParams } from '../control-common';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { MailStore } from './mail.store';
import { type Placement, parseMessageChanges, uiMessageBody } from './mail-message';
import { renderMessage } from './message-view';

type MessageParams = { upn: string; id: string };

const moveBody = z.strictObject({ folder: z.string().min(1) });

/**
 * The mail side of the Microsoft control API, under /_emulator/microsoft/users/{upn}: what a
 * person does in Outlook (a mail arrives or is sent, is read, flagged, moved, deleted), the
 * mailbox as stored (deleted ids too), and evicting every folder's delta sync state. Messages
 * come back as Graph shows them (REST ids), with their `immutableId` beside.
 */
export function registerMailControlRoutes(
  app: FastifyInstance,
  _ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const users = CONTROL_USERS;
  const userOf = controlUser(state);
  const mailOf = (user: MicrosoftUser): MailStore => state.current.mailbox(user.id).mail;

  app.post<{ Params: UserParams }>(`${users}/:upn/ui/mail/messages`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const parsed = uiMessageBody.safeParse(req.body ?? {});
    if (!parsed.success)
      return reply.code(400).send({ error: 'invalid message', issues: parsed.error.issues });
    return reply.code(201).send(render(mailOf(user).deliver(parsed.data, user)));
  });

  app.patch<{ Params: MessageParams }>(`${users}/:upn/ui/mail/messages/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    return render(mailOf(user).update(req.params.id, parseMessageChanges(req.body)));
  });

  app.post<{ Params: MessageParams }>(`${users}/:upn/ui/mail/messages/:id/move`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const parsed = moveBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid move', issues: parsed.error.issues });
    return render(mailOf(user).move(req.params.id, parsed.data.folder));
  });

  app.delete<{ Params: MessageParams }>(`${users}/:upn/ui/mail/messages/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    mailOf(user).delete(req.params.id);
    return reply.code(204).send();
  });

  app.get<{ Params: UserParams }>(`${users}/:upn/mail/messages`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const mail = mailOf(user);
    const { placements, deletedIds } = mail.snapshot();
    const folderName = new Map(mail.allFolders().map((f) => [f.id, f.wellKnownName]));
    return {
      messages: placements.map((p) => ({ folder: folderName.get(p.folderId), ...render(p) })),
      deletedIds,
    };
  });

  registerInvalidateDelta(app, state, 'mail');
}

/** As Graph shows it with no preferences (REST id, HTML body), and the immutable id. */
function render(placement: Placement) {
  return {
    ...renderMessage(placement, { idType: 'rest', bodyType: 'html' }),
    immutableId: placement.message.immutableId,
  };
}
