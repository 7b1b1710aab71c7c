import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isPlainObject } from './calendar-event';
import { ControlApiError } from './google-errors';
import type { GoogleStateRef } from './google-state';
import type { PushDispatcher } from './push.dispatcher';
import type { GoogleUser } from './user.store';

const limitsSchema = z.strictObject({
  calendarPerMinute: z.number().int().positive().optional(),
  tasksPerMinute: z.number().int().positive().optional(),
  gmailUnitsPerSecond: z.number().int().positive().optional(),
});

const userSettingsSchema = z.strictObject({
  /** The profile name sign-in id tokens carry; made from the address when absent. */
  name: z.string().trim().min(1).optional(),
  /** false: Google does not vouch for the address (`email_verified: false`). */
  emailVerified: z.boolean().optional(),
  pushUrl: z.url().optional(),
  rateLimitStatus: z.union([z.literal(403), z.literal(429)]).optional(),
  limits: limitsSchema.optional(),
});

const createUserSchema = userSettingsSchema.extend({
  email: z.email(),
  /** What the grant issued with the user consented to (space-separated); every product and the address by default. */
  scope: z.string().trim().min(1).optional(),
});

const mailSchema = z.strictObject({
  from: z.string().min(1),
  to: z.array(z.string()).default([]),
  cc: z.array(z.string()).default([]),
  subject: z.string().default(''),
  date: z.string().optional(),
  messageId: z.string().optional(),
  text: z.string().default(''),
  labelIds: z.array(z.string()).optional(),
  inReplyTo: z.string().optional(),
});

const labelChangeSchema = z.strictObject({
  add: z.array(z.string()).default([]),
  remove: z.array(z.string()).default([]),
});

type UserParams = { email: string };
type ItemParams = { email: string; id: string };

/**
 * The Google side of the control API, under /_emulator/google: users and their tokens,
 * "UI" actions (the user acting in Google's own apps, which fire watch notifications and
 * pushes like any change), and state views that do not touch rate limits or the request log.
 */
export function registerGoogleControlRoutes(
  app: FastifyInstance,
  state: GoogleStateRef,
  dispatcher: PushDispatcher,
): void {
  const userOf = (req: FastifyRequest): GoogleUser => {
    const { email } = req.params as UserParams;
    const user = state.current.users.get(email);
    if (!user) throw new ControlApiError(404, `no Google user ${email}`);
    return user;
  };
  const users = '/_emulator/google/users';

  app.get('/_emulator/google/oauth-client', async () => state.current.grants.client);
  app.get('/_emulator/google/deliveries', async (req) => {
    const { account } = req.query as { account?: string };
    return dispatcher.deliveries().filter((d) => account === undefined || d.account === account);
  });

  app.post(users, async (req, reply) => {
    const { email, scope, ...settings } = parse(createUserSchema, req.body);
    const { user, created } = state.current.users.upsert(email, settings);
    const { accessToken, refreshToken } = state.current.grants.issueGrant(user.email, scope);
    return reply
      .code(created ? 201 : 200)
      .send({ email: user.email, accessToken, refreshToken, ...state.current.grants.client });
  });
  app.get(users, async () => state.current.users.all().map(describeUser));
  app.get(`${users}/:email`, async (req) => {
    const user = userOf(req);
    return { ...describeUser(user), gmailWatch: state.current.gmailWatch.current(user.email) ?? null };
  });
  app.patch(`${users}/:email`, async (req) =>
    describeUser(state.current.users.configure(userOf(req), parse(userSettingsSchema, req.body))),
  );
  app.post(`${users}/:email/expire-access-tokens`, async (req, reply) => {
    state.current.grants.expireAccessTokens(userOf(req).email);
    return reply.code(204).send();
  });

  // Calendar, as the user edits it in Google Calendar.
  app.post(`${users}/:email/ui/calendar/events`, async (req, reply) =>
    reply.code(201).send(userOf(req).calendar.insert(req.body)),
  );
  app.patch<{ Params: ItemParams }>(`${users}/:email/ui/calendar/events/:id`, async (req) =>
    userOf(req).calendar.patch(req.params.id, req.body),
  );
  app.delete<{ Params: ItemParams }>(`${users}/:email/ui/calendar/events/:id`, async (req, reply) => {
    userOf(req).calendar.delete(req.params.id);
    return reply.code(204).send();
  });
  app.get(`${users}/:email/calendar/events`, async (req) => userOf(req).calendar.snapshot());
  app.get(`${users}/:email/calendar/channels`, async (req) =>
    state.current.calendarWatch.list(userOf(req).email),
  );

  // Gmail: mail arriving or sent, deleted, relabelled.
  app.post(`${users}/:email/ui/gmail/messages`, async (req, reply) =>
    reply.code(201).send(userOf(req).gmail.deliver(parse(mailSchema, req.body))),
  );
  app.delete<{ Params: ItemParams }>(`${users}/:email/ui/gmail/messages/:id`, async (req, reply) => {
    userOf(req).gmail.remove(req.params.id);
    return reply.code(204).send();
  });
  app.post<{ Params: ItemParams }>(`${users}/:email/ui/gmail/messages/:id/labels`, async (req) => {
    const { add, remove } = parse(labelChangeSchema, req.body);
    return userOf(req).gmail.modifyLabels(req.params.id, add, remove);
  });
  app.get(`${users}/:email/gmail/messages`, async (req) => userOf(req).gmail.snapshot());

  // Tasks, as the user edits them in Google's apps (completing one there hides it).
  app.post(`${users}/:email/ui/tasks`, async (req, reply) => {
    const { tasklist, ...task } = isPlainObject(req.body) ? req.body : {};
    const listId = typeof tasklist === 'string' ? tasklist : '@default';
    return reply.code(201).send(userOf(req).tasks.insert(listId, task, { writer: 'ui' }));
  });
  app.patch<{ Params: ItemParams }>(`${users}/:email/ui/tasks/:id`, async (req) => {
    const { tasks } = userOf(req);
    return tasks.patch(tasks.listOf(req.params.id), req.params.id, req.body, 'ui');
  });
  app.delete<{ Params: ItemParams }>(`${users}/:email/ui/tasks/:id`, async (req, reply) => {
    const { tasks } = userOf(req);
    tasks.delete(tasks.listOf(req.params.id), req.params.id);
    return reply.code(204).send();
  });
  app.get(`${users}/:email/tasks`, async (req) => userOf(req).tasks.snapshot());
}

/** A control body, or a 400 naming what is wrong with it. */
function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ControlApiError(400, `invalid request: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function describeUser(user: GoogleUser) {
  return {
    email: user.email,
    name: user.name,
    emailVerified: user.emailVerified,
    pushUrl: user.pushUrl ?? null,
    rateLimitStatus: user.rateLimitStatus,
    limits: user.limits,
  };
}
