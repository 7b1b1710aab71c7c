import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import type { EventListQuery } from './calendar.store';
import type { CalendarEvent } from './calendar-event';
import { guardDataPlane, requestUser } from './data-plane.hooks';
import { googleErrors } from './google-errors';
import { isoMs } from './google-ids';
import type { GoogleStateRef } from './google-state';
import { allParams, boolParam, firstParam, intParam, type Query, timeParam } from './query-params';
import type { GoogleUser } from './user.store';

type CalendarParams = { calendarId: string };
type EventParams = { calendarId: string; eventId: string };

/** Parameters Google refuses beside a syncToken: an incremental sync cannot be filtered. */
const NOT_WITH_SYNC_TOKEN = [
  'iCalUID',
  'orderBy',
  'privateExtendedProperty',
  'q',
  'sharedExtendedProperty',
  'timeMin',
  'timeMax',
  'updatedMin',
] as const;

/** Calendar v3 at its real paths: events (list, get, insert, patch, update, delete, watch), channels.stop. */
export function registerCalendarRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: GoogleStateRef,
): void {
  guardDataPlane(app, ctx, state, 'calendar');

  app.get('/calendar/v3/users/me/calendarList', async (req) => {
    const user = requestUser(req);
    return {
      kind: 'calendar#calendarList',
      etag: `"${ctx.now()}000"`,
      items: [
        {
          kind: 'calendar#calendarListEntry',
          etag: `"${ctx.now()}000"`,
          id: user.email,
          summary: user.email,
          timeZone: 'UTC',
          accessRole: 'owner',
          primary: true,
          defaultReminders: [],
        },
      ],
    };
  });

  app.get<{ Params: CalendarParams }>('/calendar/v3/calendars/:calendarId', async (req) => {
    const user = calendarOwner(req);
    return {
      kind: 'calendar#calendar',
      etag: `"${ctx.now()}000"`,
      id: user.email,
      summary: user.email,
      timeZone: 'UTC',
    };
  });

  app.get<{ Params: CalendarParams }>('/calendar/v3/calendars/:calendarId/events', async (req) => {
    const user = calendarOwner(req);
    const q = req.query as Query;
    const syncToken = firstParam(q, 'syncToken');
    const pageToken = firstParam(q, 'pageToken');
    if (syncToken !== undefined) {
      const refused = NOT_WITH_SYNC_TOKEN.find((p) => q[p] !== undefined);
      if (refused)
        throw googleErrors.invalid(`The ${refused} parameter cannot be used with a syncToken.`, refused);
    }
    const tokens = {
      ...(syncToken === undefined ? {} : { syncToken }),
      ...(pageToken === undefined ? {} : { pageToken }),
    };
    if (user.calendar.isIncremental(tokens) && ctx.faults.take('google', 'invalidate-cursors', user.email)) {
      state.current.invalidateCursors(user);
    }
    const page = user.calendar.list(parseListQuery(q), tokens);
    return {
      kind: 'calendar#events',
      etag: `"${ctx.now()}000"`,
      summary: user.email,
      description: '',
      updated: isoMs(ctx.now()),
      timeZone: 'UTC',
      accessRole: 'owner',
      defaultReminders: [],
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      ...(page.nextSyncToken ? { nextSyncToken: page.nextSyncToken } : {}),
      items: page.items,
    };
  });

  app.post<{ Params: CalendarParams }>('/calendar/v3/calendars/:calendarId/events', async (req, reply) =>
    sendEvent(reply, calendarOwner(req).calendar.insert(req.body)),
  );

  app.get<{ Params: EventParams }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId',
    async (req, reply) => {
      const event = calendarOwner(req).calendar.get(req.params.eventId);
      if (req.headers['if-none-match'] === event.etag)
        return reply.code(304).header('ETag', event.etag).send();
      return sendEvent(reply, event);
    },
  );

  app.patch<{ Params: EventParams }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId',
    async (req, reply) =>
      sendEvent(reply, calendarOwner(req).calendar.patch(req.params.eventId, req.body, ifMatch(req))),
  );

  app.put<{ Params: EventParams }>('/calendar/v3/calendars/:calendarId/events/:eventId', async (req, reply) =>
    sendEvent(reply, calendarOwner(req).calendar.update(req.params.eventId, req.body, ifMatch(req))),
  );

  app.delete<{ Params: EventParams }>(
    '/calendar/v3/calendars/:calendarId/events/:eventId',
    async (req, reply) => {
      calendarOwner(req).calendar.delete(req.params.eventId, ifMatch(req));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: CalendarParams }>('/calendar/v3/calendars/:calendarId/events/watch', async (req) => {
    const user = calendarOwner(req);
    return state.current.calendarWatch.watch(
      user.email,
      { resourceId: user.calendar.resourceId, calendarIdAsRequested: req.params.calendarId },
      req.body,
    );
  });

  app.post('/calendar/v3/channels/stop', async (req, reply) => {
    state.current.calendarWatch.stop(requestUser(req).email, req.body);
    return reply.code(204).send();
  });
}

/** Only the user's primary calendar exists: `primary` or the user's own address. */
function calendarOwner(req: FastifyRequest): GoogleUser {
  const user = requestUser(req);
  const { calendarId } = req.params as CalendarParams;
  if (calendarId !== 'primary' && calendarId.toLowerCase() !== user.email) throw googleErrors.notFound();
  return user;
}

function sendEvent(reply: FastifyReply, event: CalendarEvent): FastifyReply {
  return reply.header('ETag', event.etag).send(event);
}

function ifMatch(req: FastifyRequest): string | undefined {
  const header = req.headers['if-match'];
  return Array.isArray(header) ? header[0] : header;
}

export function parseListQuery(q: Query): EventListQuery {
  const orderBy = firstParam(q, 'orderBy');
  if (orderBy !== undefined && orderBy !== 'startTime' && orderBy !== 'updated') {
    throw googleErrors.invalid(`Invalid value for: orderBy`, 'orderBy');
  }
  if (orderBy === 'startTime' && !boolParam(q, 'singleEvents', false)) {
    throw googleErrors.invalid(
      'The requested ordering is not available for the particular query.',
      'orderBy',
    );
  }
  const pairs = (name: string): [string, string][] =>
    allParams(q, name).map((p) => {
      const eq = p.indexOf('=');
      if (eq <= 0) throw googleErrors.invalid(`Invalid ${name} value: ${p}`, name);
      return [p.slice(0, eq), p.slice(eq + 1)];
    });
  const query: EventListQuery = {
    maxResults: intParam(q, 'maxResults', { def: 250, min: 1, max: 2500 }),
    showDeleted: boolParam(q, 'showDeleted', false),
    privateProperties: pairs('privateExtendedProperty'),
    sharedProperties: pairs('sharedExtendedProperty'),
  };
  const updatedMin = timeParam(q, 'updatedMin');
  if (updatedMin !== undefined) query.updatedMin = updatedMin;
  const timeMin = timeParam(q, 'timeMin');
  if (timeMin !== undefined) query.timeMin = timeMin;
  const timeMax = timeParam(q, 'timeMax');
  if (timeMax !== undefined) query.timeMax = timeMax;
  const iCalUID = firstParam(q, 'iCalUID');
  if (iCalUID !== undefined) query.iCalUID = iCalUID;
  const text = firstParam(q, 'q');
  if (text !== undefined && text !== '') query.q = text;
  if (orderBy !== undefined) query.orderBy = orderBy;
  return query;
}
