import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { type DeltaToken, decodeToken, encodeToken } from '../delta';
import { originOf, requestUser } from '../graph-auth';
import { GraphError, graphErrors } from '../graph-errors';
import {
  AppliedPreferences,
  instantParam,
  intParam,
  preferences,
  queryParam,
  selectParam,
} from '../graph-request';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { Json } from './calendar-event';
import { type EventView, type RenderOptions, renderEvent, selectProperties } from './event-view';
import { parseExpand } from './extended-properties';
import type { ViewRange } from './series';
import { requireZone } from './time-zones';

type IdParams = { id: string };

/** Graph's default page of Outlook items when a client names no size (?: documented for lists, assumed for delta). */
const DEFAULT_PAGE = 10;
const MAX_PAGE = 1000;
/** Options calendarView delta refuses (`$select` it ignores: the page shape is fixed). */
const NOT_IN_DELTA = ['$expand', '$filter', '$orderby', '$search'];

/**
 * The Outlook calendar of Graph v1.0 at its real paths: `/me/events` (create, read, update,
 * delete, list) and `/me/calendarView/delta`. Requests reach here past the token guard.
 */
export function registerCalendarRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const calendarOf = (req: FastifyRequest) => state.current.mailbox(requestUser(req).id).calendar;

  app.post('/v1.0/me/events', async (req, reply) => {
    const { view } = calendarOf(req).create(req.body);
    return sendEvent(req, reply.code(201), view);
  });

  app.get('/v1.0/me/events', async (req, reply) => {
    const top = intParam(req, '$top', DEFAULT_PAGE, MAX_PAGE);
    const skip = intParam(req, '$skip', 0, Number.MAX_SAFE_INTEGER);
    if (top === 0) throw graphErrors.badRequest('Invalid value 0 for query option $top.');
    for (const option of ['$filter', '$orderby', '$search'])
      if (queryParam(req, option) !== undefined)
        throw graphErrors.badRequest(`The emulator does not support ${option} on /me/events.`);
    const { views, more } = calendarOf(req).list(top, skip);
    const { options, select, applied } = readOptions(req);
    const user = requestUser(req);
    const next = new URLSearchParams({ $top: String(top), $skip: String(skip + top) });
    for (const option of ['$select', '$expand']) {
      const value = queryParam(req, option);
      if (value !== undefined) next.set(option, value);
    }
    applied.send(reply);
    return {
      '@odata.context': `${originOf(req)}/v1.0/$metadata#users('${user.id}')/events`,
      value: views.map((v) => selectProperties(renderEvent(v, options), select)),
      ...(more ? { '@odata.nextLink': `${originOf(req)}/v1.0/me/events?${decodeDollars(next)}` } : {}),
    };
  });

  app.get<{ Params: IdParams }>('/v1.0/me/events/:id', async (req, reply) =>
    sendEvent(req, reply, calendarOf(req).get(req.params.id)),
  );

  app.patch<{ Params: IdParams }>('/v1.0/me/events/:id', async (req, reply) =>
    sendEvent(req, reply, calendarOf(req).update(req.params.id, req.body, ifMatch(req))),
  );

  app.delete<{ Params: IdParams }>('/v1.0/me/events/:id', async (req, reply) => {
    calendarOf(req).delete(req.params.id, ifMatch(req));
    return reply.code(204).send();
  });

  // Graph's segments ignore case; clients write both spellings.
  for (const path of ['/v1.0/me/calendarView/delta', '/v1.0/me/calendarview/delta'])
    app.get(path, async (req, reply) => calendarViewDelta(req, reply, ctx, state));
}

async function calendarViewDelta(
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): Promise<Json> {
  const user = requestUser(req);
  const calendar = state.current.mailbox(user.id).calendar;
  for (const option of NOT_IN_DELTA)
    if (queryParam(req, option) !== undefined)
      throw graphErrors.badRequest(`The query option ${option} is not supported by calendarView delta.`);
  const skipToken = queryParam(req, '$skiptoken');
  const deltaToken = queryParam(req, '$deltatoken');
  let token: DeltaToken | undefined;
  if (skipToken !== undefined) token = decodeToken(skipToken, 'skip');
  else if (deltaToken !== undefined) token = decodeToken(deltaToken, 'delta');
  if (token && ctx.faults.take('microsoft', 'invalidate-cursors', user.userPrincipalName))
    calendar.invalidateDelta();
  const params = token?.p ?? rangeParams(req);
  const { options, applied } = readOptions(req);
  const prefs = preferences(req);
  const maxPageSize = prefs.get('odata.maxpagesize');
  let pageSize = DEFAULT_PAGE;
  if (maxPageSize !== undefined && /^\d+$/.test(maxPageSize) && Number(maxPageSize) > 0) {
    pageSize = Math.min(Number(maxPageSize), MAX_PAGE);
    applied.add(`odata.maxpagesize=${pageSize}`);
  }
  const origin = originOf(req);
  const deltaUrl = `${origin}/v1.0/me/calendarView/delta`;
  const { entries, next } = calendar.delta(token, {
    pageSize,
    range: viewRange(params),
    params,
    restartUrl: (p) => `${deltaUrl}?${new URLSearchParams(p ?? {})}`,
  });
  applied.send(reply);
  const link =
    next.kind === 'skip'
      ? { '@odata.nextLink': `${deltaUrl}?$skiptoken=${encodeToken(next)}` }
      : { '@odata.deltaLink': `${deltaUrl}?$deltatoken=${encodeToken(next)}` };
  return {
    '@odata.context': `${origin}/v1.0/$metadata#Collection(event)`,
    ...link,
    value: entries.map((e) =>
      e.kind === 'item'
        ? { '@odata.type': '#microsoft.graph.event', ...renderEvent(e.item, options) }
        : { '@odata.type': '#microsoft.graph.event', id: e.id, '@removed': { reason: e.reason } },
    ),
  };
}

/** The range of an initial delta call: both ends required, as Graph requires them. */
function rangeParams(req: FastifyRequest): Record<string, string> {
  const startDateTime = queryParam(req, 'startDateTime');
  const endDateTime = queryParam(req, 'endDateTime');
  if (startDateTime === undefined || endDateTime === undefined)
    throw new GraphError(
      400,
      'ErrorInvalidParameter',
      'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
    );
  viewRange({ startDateTime, endDateTime });
  return { startDateTime, endDateTime };
}

function viewRange(params: Record<string, string>): ViewRange {
  const from = instantParam('startDateTime', params.startDateTime ?? '');
  const to = instantParam('endDateTime', params.endDateTime ?? '');
  if (to <= from)
    throw new GraphError(400, 'ErrorInvalidParameter', 'The endDateTime must come after the startDateTime.');
  return { from, to };
}

/** How this request wants events rendered, and the preferences it will be told were applied. */
function readOptions(req: FastifyRequest): {
  options: RenderOptions;
  select: string[] | undefined;
  applied: AppliedPreferences;
} {
  const prefs = preferences(req);
  const applied = new AppliedPreferences();
  const zoneName = prefs.get('outlook.timezone');
  const zone =
    zoneName === undefined ? { name: 'UTC', iana: 'UTC' } : { name: zoneName, iana: requireZone(zoneName) };
  if (zoneName !== undefined) applied.add(`outlook.timezone="${zoneName}"`);
  const bodyPreference = prefs.get('outlook.body-content-type')?.toLowerCase();
  const bodyType = bodyPreference === 'text' ? 'text' : 'html';
  if (bodyPreference === 'text' || bodyPreference === 'html')
    applied.add(`outlook.body-content-type="${bodyPreference}"`);
  // Ids here never change (they are immutable already), so either IdType is honoured as asked.
  const idType = prefs.get('idtype');
  if (idType !== undefined && /^(ImmutableId|RestId)$/i.test(idType)) applied.add(`IdType="${idType}"`);
  const user: MicrosoftUser = requestUser(req);
  const expand = parseExpand(queryParam(req, '$expand'));
  return {
    options: { owner: user, zone, bodyType, ...(expand === undefined ? {} : { expand }) },
    select: selectParam(req),
    applied,
  };
}

function sendEvent(req: FastifyRequest, reply: FastifyReply, view: EventView): Json {
  const { options, select, applied } = readOptions(req);
  applied.send(reply);
  const user = requestUser(req);
  return {
    '@odata.context': `${originOf(req)}/v1.0/$metadata#users('${user.id}')/events/$entity`,
    ...selectProperties(renderEvent(view, options), select),
  };
}

function ifMatch(req: FastifyRequest): string | undefined {
  const header = req.headers['if-match'];
  return Array.isArray(header) ? header[0] : header;
}

/** Query option names keep their `$` in links, as Graph writes them. */
const decodeDollars = (params: URLSearchParams): string => params.toString().replaceAll('%24', '$');
