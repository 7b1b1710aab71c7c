import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { guardDataPlane, requestUser } from './data-plane.hooks';
import { HISTORY_TYPES, type HistoryType, MESSAGE_FORMATS, type MessageFormat } from './gmail.store';
import { googleErrors } from './google-errors';
import type { GoogleStateRef } from './google-state';
import { allParams, boolParam, firstParam, intParam, type Query } from './query-params';
import type { GoogleUser } from './user.store';

type UserParams = { userId: string };
type MessageParams = { userId: string; id: string };

/** Gmail's published per-method quota units; the per-user limit is units per second. */
const QUOTA_UNITS: Record<string, number> = {
  '/gmail/v1/users/:userId/profile': 1,
  '/gmail/v1/users/:userId/labels': 1,
  '/gmail/v1/users/:userId/messages': 5,
  '/gmail/v1/users/:userId/messages/:id': 5,
  '/gmail/v1/users/:userId/history': 2,
  '/gmail/v1/users/:userId/watch': 100,
  '/gmail/v1/users/:userId/stop': 50,
};

const SYSTEM_LABELS = ['INBOX', 'SENT', 'UNREAD', 'STARRED', 'IMPORTANT', 'TRASH', 'SPAM', 'DRAFT', 'CHAT'];

/** Gmail v1 at its real paths: profile, labels, messages list/get, history, watch/stop. */
export function registerGmailRoutes(app: FastifyInstance, ctx: EmulatorContext, state: GoogleStateRef): void {
  guardDataPlane(app, ctx, state, 'gmail', (req) => QUOTA_UNITS[req.routeOptions.url ?? ''] ?? 1);

  app.get<{ Params: UserParams }>('/gmail/v1/users/:userId/profile', async (req) =>
    mailboxOwner(req).gmail.profile(),
  );

  app.get<{ Params: UserParams }>('/gmail/v1/users/:userId/labels', async (req) => {
    mailboxOwner(req);
    return {
      labels: SYSTEM_LABELS.map((id) => ({
        id,
        name: id,
        type: 'system',
        messageListVisibility: 'hide',
        labelListVisibility: 'labelHide',
      })),
    };
  });

  app.get<{ Params: UserParams }>('/gmail/v1/users/:userId/messages', async (req) => {
    const q = req.query as Query;
    const text = firstParam(q, 'q');
    const pageToken = firstParam(q, 'pageToken');
    return mailboxOwner(req).gmail.listMessages({
      labelIds: allParams(q, 'labelIds'),
      ...(text ? { q: text } : {}),
      includeSpamTrash: boolParam(q, 'includeSpamTrash', false),
      maxResults: intParam(q, 'maxResults', { def: 100, min: 1, max: 500 }),
      ...(pageToken ? { pageToken } : {}),
    });
  });

  app.get<{ Params: MessageParams }>('/gmail/v1/users/:userId/messages/:id', async (req) => {
    const q = req.query as Query;
    const format = firstParam(q, 'format') ?? 'full';
    if (!(MESSAGE_FORMATS as readonly string[]).includes(format))
      throw googleErrors.invalid('Invalid format', 'format');
    return mailboxOwner(req).gmail.getMessage(
      req.params.id,
      format as MessageFormat,
      allParams(q, 'metadataHeaders'),
    );
  });

  app.get<{ Params: UserParams }>('/gmail/v1/users/:userId/history', async (req) => {
    const user = mailboxOwner(req);
    const q = req.query as Query;
    const start = firstParam(q, 'startHistoryId');
    if (start === undefined) throw googleErrors.invalid('Missing startHistoryId', 'startHistoryId');
    if (!/^\d+$/.test(start)) throw googleErrors.invalid('Invalid startHistoryId', 'startHistoryId');
    const historyTypes = allParams(q, 'historyTypes');
    const unknown = historyTypes.find((t) => !(HISTORY_TYPES as readonly string[]).includes(t));
    if (unknown) throw googleErrors.invalid(`Invalid value at 'history_types' (${unknown})`, 'historyTypes');
    if (ctx.faults.take('google', 'invalidate-cursors', user.email)) state.current.invalidateCursors(user);
    const labelId = firstParam(q, 'labelId');
    return user.gmail.listHistory(
      {
        startHistoryId: Number(start),
        historyTypes: historyTypes as HistoryType[],
        ...(labelId ? { labelId } : {}),
        maxResults: intParam(q, 'maxResults', { def: 100, min: 1, max: 500 }),
      },
      firstParam(q, 'pageToken'),
    );
  });

  app.post<{ Params: UserParams }>('/gmail/v1/users/:userId/watch', async (req) =>
    state.current.gmailWatch.watch(mailboxOwner(req).email, req.body),
  );

  app.post<{ Params: UserParams }>('/gmail/v1/users/:userId/stop', async (req, reply) => {
    state.current.gmailWatch.stop(mailboxOwner(req).email);
    return reply.code(204).send();
  });
}

/** `me` or the user's own address; anyone else's mailbox needs delegation the emulator does not have. */
function mailboxOwner(req: FastifyRequest): GoogleUser {
  const user = requestUser(req);
  const { userId } = req.params as UserParams;
  if (userId !== 'me' && userId.toLowerCase() !== user.email) {
    throw googleErrors.forbidden(`Delegation denied for ${user.email}`);
  }
  return user;
}
