import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorContext } from '../../common/context';
import { CONTROL_USERS, controlUser, registerInvalidateDelta, type UserParams } from '../control-common';
import type { MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import { invalidProperty, type Json } from './calendar-event';
import { type EventView, type RenderOptions, renderEvent } from './event-view';
import { invitationUidProblem } from './global-object-id';

type EventParams = { upn: string; id: string };

const DAY_MS = 86_400_000;
const SEED_MINUTES = 30;
const instant = z.iso.datetime({ offset: true }).transform((s) => Date.parse(s));

/** `count` single events over [from, to): by default the 180 days either side of now. */
const seedBody = z.strictObject({
  count: z.number().int().min(1).max(100_000),
  from: instant.optional(),
  to: instant.optional(),
});

/**
 * The calendar side of the Microsoft control API, under /_emulator/microsoft/users/{upn}:
 * "UI" edits (the person editing in Outlook: no transaction id, no If-Match; a create may name
 * the `iCalUId` of an invitation from another system), a view of the calendar as stored
 * (deleted ids too), evicting the delta sync state, and seeding a calendar with many events at once.
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

  app.post<{ Params: UserParams }>(`${users}/:upn/seed/calendar`, async (req, reply) => {
    const user = userOf(req, reply);
    if (!user) return reply;
    const parsed = seedBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: 'invalid seed', issues: parsed.error.issues });
    const calendar = calendarOf(user);
    const now = calendar.now();
    const from = parsed.data.from ?? now - 180 * DAY_MS;
    const to = parsed.data.to ?? now + 180 * DAY_MS;
    if (!(from < to)) return reply.code(400).send({ error: 'invalid seed: from must come before to' });
    const count = calendar.seed(seededEvents(parsed.data.count, from, to));
    return reply
      .code(201)
      .send({ count, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  });

  registerInvalidateDelta(app, state, 'calendar');
}

/**
 * `count` single meetings of half an hour, their starts spread evenly over [from, to) (to the
 * minute), each with one or two attendees out of a thousand people at fifty companies.
 */
function seededEvents(count: number, from: number, to: number): Json[] {
  const wall = (ms: number) => ({ dateTime: new Date(ms).toISOString().slice(0, 19), timeZone: 'UTC' });
  const person = (k: number) => ({
    type: 'required',
    emailAddress: { name: `Contact ${k}`, address: `contact-${k}@customer-${k % 50}.example` },
  });
  const events: Json[] = [];
  for (let i = 0; i < count; i++) {
    const start = Math.floor((from + (i * (to - from)) / count) / 60_000) * 60_000;
    events.push({
      subject: `Seeded meeting ${i + 1}`,
      body: { contentType: 'text', content: `Seeded meeting ${i + 1} of ${count}.` },
      start: wall(start),
      end: wall(start + SEED_MINUTES * 60_000),
      location: { displayName: `Room ${(i % 20) + 1}` },
      attendees: i % 3 === 0 ? [person(i % 1000), person((i + 500) % 1000)] : [person(i % 1000)],
    });
  }
  return events;
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
