import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorContext } from '../../common/context';
import { CONTROL_USERS, controlUser, registerInvalidateDelta, type UserParams } from '../control-common';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { MailStore } from './mail.store';
import { type Placement, parseMessageChanges, type UiMessage, uiMessageBody } from './mail-message';
import { renderMessage } from './message-view';

type MessageParams = { upn: string; id: string };

const moveBody = z.strictObject({ folder: z.string().min(1) });

const DAY_MS = 86_400_000;

/** `count` messages into `folder`, received from `from` (by default 180 days ago) up to now. */
const seedBody = z.strictObject({
  count: z.number().int().min(1).max(100_000),
  folder: z.enum(['inbox', 'sentitems']).default('inbox'),
  from: z.iso
    .datetime({ offset: true })
    .transform((s) => Date.parse(s))
    .optional(),
});

/**
 * The mail side of the Microsoft control API, under /_emulator/microsoft/users/{upn}: what a
 * person does in Outlook (a mail arrives or is sent, is read, flagged, moved, deleted), the
 * mailbox as stored (deleted ids too), evicting every folder's delta sync state, and seeding
 * a folder with many messages at once. Messages
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

  app.post<{ Params: UserParams }>(`${users}/:upn/seed/mail`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const parsed = seedBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid seed', issues: parsed.error.issues });
    const { count, folder } = parsed.data;
    const mail = mailOf(user);
    const to = mail.now();
    const from = parsed.data.from ?? to - 180 * DAY_MS;
    if (!(from < to)) return reply.code(400).send({ error: 'invalid seed: from must come before now' });
    mail.seed(seededMessages(count, folder, from, to), user);
    return reply
      .code(201)
      .send({ count, folder, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  });

  registerInvalidateDelta(app, state, 'mail');
}

/**
 * `count` messages, each a conversation of its own with its own Message-ID, received at times
 * spread evenly over [from, to): into the inbox from a thousand people at fifty companies (every
 * fifth with a second one in cc), or sent by the owner to them (`sentitems`).
 */
function seededMessages(count: number, folder: 'inbox' | 'sentitems', from: number, to: number): UiMessage[] {
  const person = (k: number) => ({
    name: `Contact ${k}`,
    address: `contact-${k}@customer-${k % 50}.example`,
  });
  const messages: UiMessage[] = [];
  for (let i = 0; i < count; i++) {
    const receivedAt = Math.floor(from + (i * (to - from)) / count);
    const contact = person(i % 1000);
    const cc = i % 5 === 0 ? [person((i + 500) % 1000)] : [];
    const subject = `Seeded ${folder === 'inbox' ? 'message' : 'reply'} ${i + 1}`;
    messages.push({
      folder,
      ...(folder === 'inbox' ? { from: contact } : {}),
      to: folder === 'inbox' ? [] : [contact],
      cc,
      bcc: [],
      subject,
      body: { contentType: 'text', content: `${subject} of ${count}.` },
      sentAt: receivedAt - (folder === 'inbox' ? 60_000 : 0),
      receivedAt,
      isRead: folder === 'sentitems' || i % 2 === 0,
      importance: 'normal',
      categories: [],
      hasAttachments: false,
    });
  }
  return messages;
}

/** As Graph shows it with no preferences (REST id, HTML body), and the immutable id. */
function render(placement: Placement) {
  return {
    ...renderMessage(placement, { idType: 'rest', bodyType: 'html' }),
    immutableId: placement.message.immutableId,
  };
}
