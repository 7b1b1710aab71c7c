import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import type { Json } from '../calendar/calendar-event';
import { type DeltaToken, decodeToken, encodeToken } from '../delta';
import { originOf, requestUser } from '../graph-auth';
import { graphErrors } from '../graph-errors';
import { AppliedPreferences, intParam, preferences, queryParam, selectParam } from '../graph-request';
import type { MicrosoftStateRef } from '../microsoft-state';
import { type Placement, parseMessageChanges } from './mail-message';
import { parseChangeType, parseReceivedFilter, receivedMatches } from './mail-query';
import {
  MESSAGE_TYPE,
  type MessageRenderOptions,
  renderFolder,
  renderMessage,
  selectMessage,
} from './message-view';

type FolderParams = { folder: string };
type IdParams = { id: string };

/** Graph's default page of Outlook items when a client names no size (?: documented for lists, assumed for delta). */
const DEFAULT_PAGE = 10;
const MAX_PAGE = 1000;
/** Graph's segments ignore case; clients write both spellings. */
const FOLDERS = ['mailFolders', 'mailfolders'];

/**
 * Outlook mail of Graph v1.0, the read side: the well-known folders, messages by folder or
 * id, per-folder message delta, and what an owner may change (read, flag, categories, move,
 * delete). Requests reach here past the token guard.
 */
export function registerMailRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const mailOf = (req: FastifyRequest) => state.current.mailbox(requestUser(req).id).mail;
  const context = (req: FastifyRequest, path: string) =>
    `${originOf(req)}/v1.0/$metadata#users('${requestUser(req).id}')/${path}`;

  for (const segment of FOLDERS) {
    app.get(`/v1.0/me/${segment}`, async (req) => {
      const mail = mailOf(req);
      return {
        '@odata.context': context(req, 'mailFolders'),
        value: mail.allFolders().map((f) => renderFolder(f, mail.rootId, mail.messages(f))),
      };
    });

    app.get<{ Params: FolderParams }>(`/v1.0/me/${segment}/:folder`, async (req) => {
      const mail = mailOf(req);
      const folder = mail.folder(req.params.folder);
      return {
        '@odata.context': context(req, 'mailFolders/$entity'),
        ...renderFolder(folder, mail.rootId, mail.messages(folder)),
      };
    });

    app.get<{ Params: FolderParams }>(`/v1.0/me/${segment}/:folder/messages`, async (req, reply) => {
      const folder = mailOf(req).folder(req.params.folder);
      const path = `mailFolders/${encodeURIComponent(req.params.folder)}/messages`;
      return listMessages(req, reply, mailOf(req).messages(folder), path);
    });

    app.get<{ Params: FolderParams }>(`/v1.0/me/${segment}/:folder/messages/delta`, async (req, reply) =>
      messagesDelta(req, reply, ctx, state),
    );

    app.get<{ Params: FolderParams & IdParams }>(
      `/v1.0/me/${segment}/:folder/messages/:id`,
      async (req, reply) => {
        const mail = mailOf(req);
        const placement = mail.get(req.params.id);
        if (placement.folderId !== mail.folder(req.params.folder).id) throw graphErrors.notFound();
        return sendMessage(req, reply, placement);
      },
    );
  }

  app.get('/v1.0/me/messages', async (req, reply) =>
    listMessages(req, reply, mailOf(req).messages(), 'messages'),
  );

  app.get<{ Params: IdParams }>('/v1.0/me/messages/:id', async (req, reply) =>
    sendMessage(req, reply, mailOf(req).get(req.params.id)),
  );

  app.patch<{ Params: IdParams }>('/v1.0/me/messages/:id', async (req, reply) =>
    sendMessage(req, reply, mailOf(req).update(req.params.id, parseMessageChanges(req.body), ifMatch(req))),
  );

  app.delete<{ Params: IdParams }>('/v1.0/me/messages/:id', async (req, reply) => {
    mailOf(req).delete(req.params.id, ifMatch(req));
    return reply.code(204).send();
  });

  app.post<{ Params: IdParams }>('/v1.0/me/messages/:id/move', async (req, reply) => {
    const body = (req.body ?? {}) as { destinationId?: unknown };
    if (typeof body.destinationId !== 'string')
      throw graphErrors.badRequest('The destinationId of the move is required.');
    return sendMessage(req, reply.code(201), mailOf(req).move(req.params.id, body.destinationId));
  });

  /** A page of messages at `/me/{path}`, newest first, paged by $top and $skip as Graph pages message lists. */
  function listMessages(req: FastifyRequest, reply: FastifyReply, all: Placement[], path: string): Json {
    const top = intParam(req, '$top', DEFAULT_PAGE, MAX_PAGE);
    const skip = intParam(req, '$skip', 0, Number.MAX_SAFE_INTEGER);
    if (top === 0) throw graphErrors.badRequest('Invalid value 0 for query option $top.');
    refuse(req, ['$search', '$expand'], 'message lists');
    const orderBy = queryParam(req, '$orderby');
    if (orderBy !== undefined && !/^\s*receivedDateTime\s+desc\s*$/i.test(orderBy))
      throw graphErrors.badRequest(
        `The emulator orders messages only by 'receivedDateTime desc', not '${orderBy}'.`,
      );
    const filterText = queryParam(req, '$filter');
    const filter = filterText === undefined ? undefined : parseReceivedFilter(filterText);
    const matching = all.filter((p) => receivedMatches(filter, p.message.fields.receivedAt));
    const { options, select, applied } = readOptions(req);
    const next = new URLSearchParams({ $top: String(top), $skip: String(skip + top) });
    for (const option of ['$select', '$filter', '$orderby']) {
      const value = queryParam(req, option);
      if (value !== undefined) next.set(option, value);
    }
    applied.send(reply);
    const more = skip + top < matching.length;
    return {
      '@odata.context': context(req, path),
      value: matching.slice(skip, skip + top).map((p) => selectMessage(renderMessage(p, options), select)),
      ...(more ? { '@odata.nextLink': `${originOf(req)}/v1.0/me/${path}?${decodeDollars(next)}` } : {}),
    };
  }

  function sendMessage(req: FastifyRequest, reply: FastifyReply, placement: Placement): Json {
    const { options, select, applied } = readOptions(req);
    applied.send(reply);
    return {
      '@odata.context': context(req, 'messages/$entity'),
      ...selectMessage(renderMessage(placement, options), select),
    };
  }
}

async function messagesDelta(
  req: FastifyRequest<{ Params: FolderParams }>,
  reply: FastifyReply,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): Promise<Json> {
  const user = requestUser(req);
  const mail = state.current.mailbox(user.id).mail;
  const folder = mail.folder(req.params.folder);
  refuse(req, ['$search', '$expand', '$orderby', '$skip'], 'message delta');
  const skipToken = queryParam(req, '$skiptoken');
  const deltaToken = queryParam(req, '$deltatoken');
  let token: DeltaToken | undefined;
  if (skipToken !== undefined) token = decodeToken(skipToken, 'skip');
  else if (deltaToken !== undefined) token = decodeToken(deltaToken, 'delta');
  if (token && token.p?.folder !== folder.id) throw graphErrors.syncStateNotFound(400);
  if (token && ctx.faults.take('microsoft', 'invalidate-cursors', user.userPrincipalName))
    mail.invalidateDelta();
  const params = token?.p ?? initialParams(req, folder.id);
  const { options, applied } = readOptions(req);
  const pageSize = deltaPageSize(req, applied);
  const origin = originOf(req);
  const deltaUrl = `${origin}/v1.0/me/mailFolders/${encodeURIComponent(req.params.folder)}/messages/delta`;
  const { entries, next } = mail.delta(folder, token, {
    pageSize,
    idType: options.idType,
    ...(params.$filter === undefined ? {} : { received: parseReceivedFilter(params.$filter) }),
    ...(params.changeType === undefined ? {} : { changeType: parseChangeType(params.changeType) }),
    params,
    restartUrl: (p) => {
      const { folder: _, ...query } = p ?? {};
      const search = decodeDollars(new URLSearchParams(query));
      return search === '' ? deltaUrl : `${deltaUrl}?${search}`;
    },
  });
  applied.send(reply);
  const select = params.$select?.split(',').map((s) => s.trim());
  const link =
    next.kind === 'skip'
      ? { '@odata.nextLink': `${deltaUrl}?$skiptoken=${encodeToken(next)}` }
      : { '@odata.deltaLink': `${deltaUrl}?$deltatoken=${encodeToken(next)}` };
  return {
    '@odata.context': `${origin}/v1.0/$metadata#Collection(message)`,
    ...link,
    value: entries.map((e) =>
      e.kind === 'item'
        ? { '@odata.type': MESSAGE_TYPE, ...selectMessage(renderMessage(e.item, options), select) }
        : { '@odata.type': MESSAGE_TYPE, id: e.id, '@removed': { reason: e.reason } },
    ),
  };
}

/** The options of an initial delta call, checked now and carried in every token after it. */
function initialParams(req: FastifyRequest, folderId: string): Record<string, string> {
  const params: Record<string, string> = { folder: folderId };
  const select = queryParam(req, '$select');
  const filter = queryParam(req, '$filter');
  const changeType = queryParam(req, 'changeType');
  if (select !== undefined && select.trim() !== '') {
    selectMessage({}, selectParam(req));
    params.$select = select;
  }
  if (filter !== undefined) {
    parseReceivedFilter(filter);
    params.$filter = filter;
  }
  if (changeType !== undefined) params.changeType = parseChangeType(changeType);
  return params;
}

/** `Prefer: odata.maxpagesize`, else `$top` (?: Graph lists $top among message delta's options), else Graph's default. */
function deltaPageSize(req: FastifyRequest, applied: AppliedPreferences): number {
  const max = preferences(req).get('odata.maxpagesize');
  if (max !== undefined && /^\d+$/.test(max) && Number(max) > 0) {
    const size = Math.min(Number(max), MAX_PAGE);
    applied.add(`odata.maxpagesize=${size}`);
    return size;
  }
  const top = intParam(req, '$top', DEFAULT_PAGE, MAX_PAGE);
  return top === 0 ? DEFAULT_PAGE : top;
}

/** How this request wants messages rendered, and the preferences it will be told were applied. */
function readOptions(req: FastifyRequest): {
  options: MessageRenderOptions;
  select: string[] | undefined;
  applied: AppliedPreferences;
} {
  const prefs = preferences(req);
  const applied = new AppliedPreferences();
  const bodyPreference = prefs.get('outlook.body-content-type')?.toLowerCase();
  if (bodyPreference === 'text' || bodyPreference === 'html')
    applied.add(`outlook.body-content-type="${bodyPreference}"`);
  const idPreference = prefs.get('idtype');
  const immutable = idPreference !== undefined && /^ImmutableId$/i.test(idPreference);
  if (idPreference !== undefined && /^(ImmutableId|RestId)$/i.test(idPreference))
    applied.add(`IdType="${idPreference}"`);
  return {
    options: {
      idType: immutable ? 'immutable' : 'rest',
      bodyType: bodyPreference === 'text' ? 'text' : 'html',
    },
    select: selectParam(req),
    applied,
  };
}

function refuse(req: FastifyRequest, options: string[], where: string): void {
  for (const option of options)
    if (queryParam(req, option) !== undefined)
      throw graphErrors.badRequest(`The query option ${option} is not supported by the emulator's ${where}.`);
}

function ifMatch(req: FastifyRequest): string | undefined {
  const header = req.headers['if-match'];
  return Array.isArray(header) ? header[0] : header;
}

/** Query option names keep their `$` in links, as Graph writes them. */
const decodeDollars = (params: URLSearchParams): string => params.toString().replaceAll('%24', '$');
