import type { FastifyInstance } from 'fastify';
import type { MailCatcher } from './mail-catcher';

/** The caught mail, on every emulator port: `?to=` one recipient's, newest first. */
export function registerMailControlRoutes(app: FastifyInstance, mail: MailCatcher): void {
  app.get<{ Querystring: { to?: string } }>('/_emulator/mail/messages', async (req) =>
    mail.list(req.query.to || undefined),
  );
  app.delete('/_emulator/mail/messages', async (_req, reply) => {
    mail.clear();
    return reply.code(204).send();
  });
}
