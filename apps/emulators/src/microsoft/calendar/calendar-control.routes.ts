import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { CONTROL_USERS, controlUser, registerInvalidateDelta, type UserParams } from '../control-common';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import { invalidProperty } from './calendar-event';
import { type EventView, type RenderOptions, renderEvent } from './event-view';
import { invitationUidProblem } from './global-object-id';

type EventParams = { upn: string; id: string };

/**
 * The calendar side of the Microsoft control API, under /_emulator/microsoft/users/{upn}:
 * "UI" edits (the person editing in Outlook: no transaction id, no If-Match; a create may name
 * the `iCalUId` of an invitation from another system), a view of the calendar as stored
 * (deleted ids too), and evicting the delta sync state.
 */
export function registerCalendarControlRoutes(
  app: FastifyInstance,
  _ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const users = CONTROL_USERS;
  const userOf = controlUser(state);
  const calendarOf = (user: MicrosoftUser) => state.current.mailbox(user.id).calendar;

  app.post<{ Params: UserParams }>(`${users}/:upn/ui/calendar/events`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const body =
      req.body && typeof req.body === 'object' ? { ...req.body, transactionId: undefined } : req.body;
    const invitedAs = invitationUid(body);
    const invitedBy = invitedAs === undefined ? undefined : invitationOrganizer(body);
    return reply.code(201).send(render(user, calendarOf(user).create(body, invitedAs, invitedBy).view));
  });

  app.patch<{ Params: EventParams }>(`${users}/:upn/ui/calendar/events/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    return render(user, calendarOf(user).update(req.params.id, req.body));
  });

  app.delete<{ Params: EventParams }>(`${users}/:upn/ui/calendar/events/:id`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    calendarOf(user).delete(req.params.id);
    return reply.code(204).send();
  });

  app.get<{ Params: UserParams }>(`${users}/:upn/calendar/events`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const { views, deletedIds } = calendarOf(user).snapshot();
    return { events: views.map((v) => render(user, v)), deletedIds };
  });

  registerInvalidateDelta(app, state, 'calendar');
}

/**
 * The UID an `iCalUId` in a "ui" create names: the event came as an invitation from another
 * system (Google Calendar, say) with that UID, and its iCalUId carries it as Graph's does.
 */
function invitationUid(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || !('iCalUId' in body) || body.iCalUId === undefined)
    return undefined;
  const problem = invitationUidProblem(body.iCalUId);
  if (problem) throw invalidProperty('iCalUId', problem);
  return body.iCalUId as string;
}

/**
 * Who sent an invitation (`organizer: { emailAddress: { name?, address } }` beside `iCalUId`):
 * the event is then the owner's copy of someone else's meeting (isOrganizer false). Without it
 * the owner is taken as the organizer.
 */
function invitationOrganizer(body: unknown): { name: string; address: string } | undefined {
  const organizer = (body as { organizer?: { emailAddress?: { name?: unknown; address?: unknown } } })
    .organizer;
  if (organizer === undefined) return undefined;
  const address = organizer?.emailAddress?.address;
  if (typeof address !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(address))
    throw invalidProperty('organizer', 'an invitation names its organizer as { emailAddress: { address } }');
  const name = organizer.emailAddress?.name;
  return { name: typeof name === 'string' && name !== '' ? name : address, address: address.toLowerCase() };
}

/** As Graph shows it with no preferences: times in UTC, bodies in HTML. */
function render(user: MicrosoftUser, view: EventView) {
  const options: RenderOptions = { owner: user, zone: { name: 'UTC', iana: 'UTC' }, bodyType: 'html' };
  return renderEvent(view, options);
}
