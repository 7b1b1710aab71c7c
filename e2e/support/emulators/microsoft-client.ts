// The Microsoft 365 emulator's control routes (`/_emulator/microsoft/…`, docs/microsoft.md).

import { call, enc, type FaultSpec, type LoggedRequest } from './control';
import type {
  GraphDateTimeZone,
  MailAddressInput,
  MicrosoftApp,
  MicrosoftArea,
  MicrosoftDelivery,
  MicrosoftGrant,
  MicrosoftSubscription,
  MicrosoftSubscriptionSettings,
  MicrosoftUser,
  OutlookEvent,
  OutlookEventInput,
  OutlookMailInput,
  OutlookMessage,
  OutlookMessageChanges,
  TodoList,
  TodoTask,
  TodoTaskInput,
} from './microsoft-types';

/** The Microsoft 365 emulator's control routes (`/_emulator/microsoft/…`), for one base URL. */
export function microsoftControl(base: string) {
  const ms = <T>(method: string, path: string, body?: unknown) => call<T>(base, method, path, body);
  const root = '/_emulator/microsoft';
  const user = (upn: string) => `${root}/users/${enc(upn)}`;
  const ui = (upn: string, area: string, id?: string) =>
    `${user(upn)}/ui/${area}${id === undefined ? '' : `/${enc(id)}`}`;
  const utc = (at: Date | string): GraphDateTimeZone => ({
    dateTime: (typeof at === 'string' ? new Date(at) : at).toISOString().slice(0, 19),
    timeZone: 'UTC',
  });

  const calendar = {
    create: (upn: string, event: OutlookEventInput) =>
      ms<OutlookEvent>('POST', ui(upn, 'calendar/events'), event),
    update: (upn: string, id: string, patch: Partial<OutlookEventInput>) =>
      ms<OutlookEvent>('PATCH', ui(upn, 'calendar/events', id), patch),
    /** Reschedules an event (instants, written in UTC). */
    move: (upn: string, id: string, start: Date | string, end: Date | string) =>
      ms<OutlookEvent>('PATCH', ui(upn, 'calendar/events', id), { start: utc(start), end: utc(end) }),
    remove: (upn: string, id: string) => ms<void>('DELETE', ui(upn, 'calendar/events', id)),
    /** The calendar as stored (times in UTC), and the ids of deleted events. */
    snapshot: (upn: string) =>
      ms<{ events: OutlookEvent[]; deletedIds: string[] }>('GET', `${user(upn)}/calendar/events`),
    list: (upn: string) => calendar.snapshot(upn).then((s) => s.events),
  };

  const mail = {
    /** A mail arriving (the inbox unless `folder` says otherwise). */
    receive: (upn: string, message: OutlookMailInput & { from: MailAddressInput }) =>
      ms<OutlookMessage>('POST', ui(upn, 'mail/messages'), { folder: 'inbox', ...message }),
    /** A mail the owner sent: it lands in Sent Items, from the owner. */
    send: (upn: string, message: Omit<OutlookMailInput, 'folder'>) =>
      ms<OutlookMessage>('POST', ui(upn, 'mail/messages'), { ...message, folder: 'sentitems' }),
    /** Any folder, as given. */
    deliver: (upn: string, message: OutlookMailInput) =>
      ms<OutlookMessage>('POST', ui(upn, 'mail/messages'), message),
    update: (upn: string, id: string, changes: OutlookMessageChanges) =>
      ms<OutlookMessage>('PATCH', ui(upn, 'mail/messages', id), changes),
    /** Into another folder: Outlook gives it a new REST id (the immutable id stays). */
    move: (upn: string, id: string, folder: string) =>
      ms<OutlookMessage>('POST', `${ui(upn, 'mail/messages', id)}/move`, { folder }),
    remove: (upn: string, id: string) => ms<void>('DELETE', ui(upn, 'mail/messages', id)),
    snapshot: (upn: string) =>
      ms<{ messages: OutlookMessage[]; deletedIds: string[] }>('GET', `${user(upn)}/mail/messages`),
    list: (upn: string) => mail.snapshot(upn).then((s) => s.messages),
  };

  const todo = {
    createList: (upn: string, displayName: string) =>
      ms<Omit<TodoList, 'tasks'>>('POST', ui(upn, 'todo/lists'), { displayName }),
    create: (upn: string, task: TodoTaskInput) => ms<TodoTask>('POST', ui(upn, 'todo/tasks'), task),
    update: (upn: string, id: string, patch: Partial<Omit<TodoTaskInput, 'listId'>>) =>
      ms<TodoTask>('PATCH', ui(upn, 'todo/tasks', id), patch),
    /** Ticked off in To Do (To Do keeps the date only). */
    complete: (upn: string, id: string, at: Date = new Date()) =>
      ms<TodoTask>('PATCH', ui(upn, 'todo/tasks', id), { status: 'completed', completedDateTime: utc(at) }),
    remove: (upn: string, id: string) => ms<void>('DELETE', ui(upn, 'todo/tasks', id)),
    snapshot: (upn: string) =>
      ms<{ lists: TodoList[]; deletedListIds: string[]; deletedTaskIds: string[] }>(
        'GET',
        `${user(upn)}/todo/tasks`,
      ),
    /** Every task of every list, each with its `listId`. */
    list: (upn: string) =>
      todo.snapshot(upn).then((s) => s.lists.flatMap((l) => l.tasks.map((t) => ({ ...t, listId: l.id })))),
  };

  return {
    url: base,
    createUser: (input: { upn: string; displayName?: string; tenantId?: string }) =>
      ms<MicrosoftUser>('POST', `${root}/users`, {
        userPrincipalName: input.upn,
        ...(input.displayName === undefined ? {} : { displayName: input.displayName }),
        ...(input.tenantId === undefined ? {} : { tenantId: input.tenantId }),
      }),
    users: () => ms<MicrosoftUser[]>('GET', `${root}/users`),
    /** A new sign-in name or display name; the object id stays. */
    updateUser: (upn: string, changes: { userPrincipalName?: string; displayName?: string }) =>
      ms<MicrosoftUser>('PATCH', user(upn), changes),
    registerApp: (input: {
      redirectUris: string[];
      clientId?: string;
      clientSecret?: string;
      displayName?: string;
    }) => ms<MicrosoftApp>('POST', `${root}/apps`, input),
    /** The emulator's own app: any http loopback redirect URI is its. */
    oauthClient: () => ms<{ clientId: string; clientSecret: string }>('GET', `${root}/oauth-client`),
    /** Tokens without the consent pages. */
    grant: (upn: string, clientId: string, scopes: string[]) =>
      ms<MicrosoftGrant>('POST', `${user(upn)}/grants`, { clientId, scopes }),
    /** The user's grants (for one app, or all) fail from now on. */
    failGrant: (upn: string, reason: 'revoked' | 'expired' | 'no-consent', clientId?: string) =>
      ms<void>(
        'POST',
        `${user(upn)}/grants/fail`,
        clientId === undefined ? { reason } : { reason, clientId },
      ),
    expireAccessTokens: (upn: string) => ms<void>('POST', `${user(upn)}/grants/expire-access`),
    calendar,
    mail,
    todo,
    /** A fault on Microsoft calls (for `account`, a user principal name, or every account). */
    fault: (spec: Omit<FaultSpec, 'service'>) =>
      ms<FaultSpec>('POST', '/_emulator/faults', { ...spec, service: 'microsoft' }),
    subscriptions: () =>
      ms<{ subscriptions: MicrosoftSubscription[]; deliveries: MicrosoftDelivery[] }>(
        'GET',
        `${root}/subscriptions`,
      ),
    /** A lifecycle notification to the subscription's lifecycleNotificationUrl. */
    lifecycle: (
      subscriptionId: string,
      event: 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed',
    ) => ms<{ sent: boolean }>('POST', `${root}/subscriptions/${enc(subscriptionId)}/lifecycle`, { event }),
    subscriptionSettings: (settings: MicrosoftSubscriptionSettings) =>
      ms<Required<MicrosoftSubscriptionSettings>>('POST', `${root}/subscriptions/settings`, settings),
    /** The per-mailbox throttle's limits (until the next reset). */
    setLimits: (limits: { concurrent?: number; perTenMinutes?: number }) =>
      ms<{ concurrent: number; perTenMinutes: number }>('POST', `${root}/limits`, limits),
    limits: () => ms<{ concurrent: number; perTenMinutes: number }>('GET', `${root}/limits`),
    /** Evicts every delta sync state of the user's area: the next delta call is refused. */
    invalidateDelta: (
      upn: string,
      area: MicrosoftArea,
      options: { status?: 400 | 410; restart?: boolean } = {},
    ) => ms<void>('POST', `${user(upn)}/${area}/invalidate-delta`, options),
    /** Graph requests made for the user (the shared request log). */
    requests: (upn?: string) =>
      ms<LoggedRequest[]>(
        'GET',
        `/_emulator/requests?service=microsoft${upn === undefined ? '' : `&account=${enc(upn.toLowerCase())}`}`,
      ),
  };
}

export type MicrosoftControl = ReturnType<typeof microsoftControl>;
