// The Google emulator's control routes (`/_emulator/google/…`, docs/google.md).

import { call, enc } from './control';

export interface GoogleUserGrant {
  email: string;
  accessToken: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
}

export interface CalendarEventInput {
  id?: string;
  summary?: string;
  description?: string;
  location?: string;
  start?: { dateTime?: string; date?: string; timeZone?: string };
  end?: { dateTime?: string; date?: string; timeZone?: string };
  attendees?: Array<{ email: string; displayName?: string; responseStatus?: string; organizer?: boolean }>;
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  [key: string]: unknown;
}

export interface CalendarEvent extends CalendarEventInput {
  id: string;
  status: string;
  iCalUID: string;
  etag: string;
  updated: string;
}

export interface MailInput {
  from: string;
  to?: string[];
  cc?: string[];
  subject?: string;
  /** RFC 3339 or RFC 2822; becomes internalDate. */
  date?: string;
  messageId?: string;
  text?: string;
  labelIds?: string[];
  inReplyTo?: string;
}

export interface GmailMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  internalDate: string;
  payload?: { headers: Array<{ name: string; value: string }> };
  [key: string]: unknown;
}

export interface TaskInput {
  title?: string;
  notes?: string;
  due?: string;
  status?: 'needsAction' | 'completed';
  completed?: string;
  /** Task list id; default `@default`. */
  tasklist?: string;
  [key: string]: unknown;
}

export interface GoogleTask extends TaskInput {
  id: string;
  updated: string;
}

/** The Google emulator's control routes, for one base URL. */
export function googleControl(base: string) {
  const gg = <T>(method: string, path: string, body?: unknown) => call<T>(base, method, path, body);
  const users = '/_emulator/google/users';
  const user = (email: string) => `${users}/${enc(email)}`;
  return {
    createUser: (email: string, settings: { pushUrl?: string; rateLimitStatus?: 403 | 429 } = {}) =>
      gg<GoogleUserGrant>('POST', users, { email, ...settings }),
    updateUser: (email: string, settings: { pushUrl?: string; rateLimitStatus?: 403 | 429 }) =>
      gg<Record<string, unknown>>('PATCH', user(email), settings),
    user: (email: string) => gg<Record<string, unknown>>('GET', user(email)),
    expireAccessTokens: (email: string) => gg<void>('POST', `${user(email)}/expire-access-tokens`),
    oauthClient: () =>
      gg<{ clientId: string; clientSecret: string }>('GET', '/_emulator/google/oauth-client'),
    deliveries: (account?: string) =>
      gg<Array<Record<string, unknown>>>(
        'GET',
        `/_emulator/google/deliveries${account ? `?account=${enc(account)}` : ''}`,
      ),
    calendar: {
      create: (email: string, event: CalendarEventInput) =>
        gg<CalendarEvent>('POST', `${user(email)}/ui/calendar/events`, event),
      update: (email: string, id: string, patch: Partial<CalendarEventInput>) =>
        gg<CalendarEvent>('PATCH', `${user(email)}/ui/calendar/events/${enc(id)}`, patch),
      /** Reschedules an event: a patch of start and end. */
      move: (email: string, id: string, start: string, end: string) =>
        gg<CalendarEvent>('PATCH', `${user(email)}/ui/calendar/events/${enc(id)}`, {
          start: { dateTime: start },
          end: { dateTime: end },
        }),
      cancel: (email: string, id: string) =>
        gg<void>('DELETE', `${user(email)}/ui/calendar/events/${enc(id)}`),
      list: (email: string) => gg<CalendarEvent[]>('GET', `${user(email)}/calendar/events`),
      channels: (email: string) =>
        gg<Array<Record<string, unknown>>>('GET', `${user(email)}/calendar/channels`),
    },
    gmail: {
      insert: (email: string, mail: MailInput) =>
        gg<GmailMessage>('POST', `${user(email)}/ui/gmail/messages`, mail),
      remove: (email: string, id: string) =>
        gg<void>('DELETE', `${user(email)}/ui/gmail/messages/${enc(id)}`),
      label: (email: string, id: string, change: { add?: string[]; remove?: string[] }) =>
        gg<GmailMessage>('POST', `${user(email)}/ui/gmail/messages/${enc(id)}/labels`, change),
      list: (email: string) => gg<GmailMessage[]>('GET', `${user(email)}/gmail/messages`),
    },
    tasks: {
      create: (email: string, task: TaskInput) => gg<GoogleTask>('POST', `${user(email)}/ui/tasks`, task),
      update: (email: string, id: string, patch: Partial<TaskInput>) =>
        gg<GoogleTask>('PATCH', `${user(email)}/ui/tasks/${enc(id)}`, patch),
      /** Completed in Google's own apps: the task comes back hidden. */
      complete: (email: string, id: string, at: Date = new Date()) =>
        gg<GoogleTask>('PATCH', `${user(email)}/ui/tasks/${enc(id)}`, {
          status: 'completed',
          completed: at.toISOString(),
        }),
      remove: (email: string, id: string) => gg<void>('DELETE', `${user(email)}/ui/tasks/${enc(id)}`),
      list: (email: string) => gg<GoogleTask[]>('GET', `${user(email)}/tasks`),
    },
  };
}
