// A small typed client for the emulators' control API (apps/emulators/README.md,
// docs/hubspot.md, docs/google.md, docs/microsoft.md). Plain fetch, no vitest: the e2e
// harness, scripts/demo-world.ts and scripts/demo-world-outlook.ts use it.

export interface EmulatorUrls {
  hubspot: string;
  google: string;
  /**
   * Microsoft 365 (Graph and the identity platform), `https://localhost:PORT`. A process that
   * calls it trusts its authority through NODE_EXTRA_CA_CERTS (`microsoftCa`).
   */
  microsoft?: string;
  /** The PEM file of the authority the Microsoft emulator's certificate is signed by. */
  microsoftCa?: string;
  /** The mail catch-all (`smtp://host:port`), where the API sends sign-in links. */
  smtp?: string;
}

export type HubspotObjectType = 'contacts' | 'companies' | 'deals' | 'meetings' | 'tasks' | 'emails';
export type PropertyValues = Record<string, string | number | boolean | null>;

export interface HubspotRecord {
  id: string;
  properties: Record<string, string | null>;
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  associations?: Record<string, { results: Array<{ id: string; type: string }> }>;
}

export interface HubspotPortalGrant {
  portalId: number;
  appId: number;
  clientId: string;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface HubspotLimits {
  per10s?: number;
  searchPerSecond?: number;
  windowMs?: number;
  perDay?: number;
}

export interface HubspotWebhookTiming {
  batchDelayMs?: number;
  maxBatchSize?: number;
  retryBaseMs?: number;
  maxRetries?: number;
  timeoutMs?: number;
  /** Events gather unsent until set back to false, then go out at once. */
  held?: boolean;
}

export interface CreatePortalInput {
  portalId: number;
  appId: number;
  clientSecret: string;
  clientId?: string;
  webhookUrl?: string | null;
  limits?: HubspotLimits;
  webhookTiming?: HubspotWebhookTiming;
  uniqueProperties?: Partial<Record<HubspotObjectType, string[]>>;
  subscriptions?: Array<{ subscriptionType: string; propertyName?: string; active?: boolean }>;
}

export interface HubspotOwner {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  userId: number;
}

export interface WebhookDelivery {
  at: string;
  sentAt?: string;
  url: string;
  attemptNumber: number;
  eventIds: number[];
  outcome: 'delivered' | 'failed' | 'dropped';
  status?: number;
  error?: string;
  duplicate?: boolean;
}

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

export type FaultKind =
  | 'rate-limit'
  | 'server-error'
  | 'latency'
  | 'drop-webhooks'
  | 'duplicate-webhooks'
  | 'revoke-token'
  | 'invalidate-cursors'
  | 'validation-error';

export type EmulatedService = 'hubspot' | 'google' | 'microsoft';

export interface FaultSpec {
  service: EmulatedService;
  kind: FaultKind;
  count?: number;
  ms?: number;
  /** A HubSpot portal id, a Google user's email or a Microsoft user principal name; absent = every account. */
  account?: string | number;
  /** The share of matching calls it applies to (0 < rate ≤ 1); absent = every one. */
  rate?: number;
}

export interface LoggedRequest {
  at: string;
  service: EmulatedService;
  method: string;
  path: string;
  status: number;
  account: string | null;
}

// ---- Microsoft 365 (docs/microsoft.md) ----

export interface MicrosoftUser {
  /** The object id (`oid`, the `id` of /me): stable for the user's life. */
  id: string;
  tenantId: string;
  userPrincipalName: string;
  displayName: string;
  mail: string;
}

export interface MicrosoftApp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  displayName: string;
}

export interface MicrosoftGrant {
  accessToken: string;
  refreshToken: string;
  /** Seconds. */
  expiresIn: number;
  /** The granted scopes, space-separated. */
  scope: string;
}

export interface GraphDateTimeZone {
  /** Wall-clock time without an offset (Graph renders seven fractional digits). */
  dateTime: string;
  timeZone: string;
}

export interface GraphRecipient {
  emailAddress: { name: string; address: string };
}

export type AttendeeResponse =
  | 'none'
  | 'organizer'
  | 'tentativelyAccepted'
  | 'accepted'
  | 'declined'
  | 'notResponded';

export interface OutlookAttendeeInput {
  type?: 'required' | 'optional' | 'resource';
  emailAddress: { name?: string; address: string };
  status?: { response: AttendeeResponse; time?: string };
}

/** Graph's event body, as a person's Outlook writes it (calendar/calendar-event.ts). */
export interface OutlookEventInput {
  subject?: string;
  body?: { contentType: 'text' | 'html'; content: string };
  start?: GraphDateTimeZone;
  end?: GraphDateTimeZone;
  isAllDay?: boolean;
  location?: { displayName: string } | null;
  attendees?: OutlookAttendeeInput[];
  categories?: string[];
  importance?: 'low' | 'normal' | 'high';
  showAs?: 'unknown' | 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere';
  isOnlineMeeting?: boolean;
  onlineMeetingProvider?: 'unknown' | 'skypeForBusiness' | 'skypeForConsumer' | 'teamsForBusiness';
  recurrence?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export interface OutlookEvent {
  id: string;
  iCalUId: string;
  changeKey: string;
  subject: string;
  start: GraphDateTimeZone;
  end: GraphDateTimeZone;
  attendees: Array<{
    type: string;
    emailAddress: { name: string; address: string };
    status: { response: string; time: string };
  }>;
  organizer: GraphRecipient;
  isOrganizer: boolean;
  lastModifiedDateTime: string;
  [key: string]: unknown;
}

export type MailAddressInput = string | { name?: string; address: string };

/** A mail as it happens in Outlook (mail/mail-message.ts `uiMessageBody`). */
export interface OutlookMailInput {
  /** A well-known folder (`inbox`, `sentitems`, `drafts`, `deleteditems`, `archive`) or a folder id. Default inbox. */
  folder?: string;
  /** Required for received mail; sent mail and drafts come from the mailbox's owner. */
  from?: MailAddressInput;
  to?: MailAddressInput | MailAddressInput[];
  cc?: MailAddressInput | MailAddressInput[];
  bcc?: MailAddressInput | MailAddressInput[];
  subject?: string;
  /** Plain text, or an itemBody. */
  body?: string | { contentType: 'text' | 'html'; content: string };
  /** RFC 3339 with an offset. */
  sentAt?: string;
  receivedAt?: string;
  /** `<local@domain>`; one is made when absent. */
  internetMessageId?: string;
  /** Mail with the same conversationId is one conversation; a new one is made when absent. */
  conversationId?: string;
  isRead?: boolean;
  importance?: 'low' | 'normal' | 'high';
  categories?: string[];
  hasAttachments?: boolean;
  meetingRequest?: {
    type?:
      | 'meetingRequest'
      | 'meetingCancelled'
      | 'meetingAccepted'
      | 'meetingTenativelyAccepted'
      | 'meetingDeclined';
    start: string;
    end: string;
    isAllDay?: boolean;
    location?: string;
  };
}

export interface OutlookMessage {
  id: string;
  /** The id `Prefer: IdType="ImmutableId"` gives: it survives moves. */
  immutableId: string;
  internetMessageId: string;
  conversationId: string;
  subject: string;
  parentFolderId: string;
  from: GraphRecipient;
  toRecipients: GraphRecipient[];
  ccRecipients: GraphRecipient[];
  receivedDateTime: string;
  sentDateTime: string | null;
  isRead: boolean;
  isDraft: boolean;
  /** In the mailbox listing: the well-known folder the message is in. */
  folder?: string;
  [key: string]: unknown;
}

export interface OutlookMessageChanges {
  isRead?: boolean;
  categories?: string[];
  importance?: 'low' | 'normal' | 'high';
  flag?: { flagStatus: 'notFlagged' | 'complete' | 'flagged' };
  inferenceClassification?: 'focused' | 'other';
}

export type TodoStatus = 'notStarted' | 'inProgress' | 'completed' | 'waitingOnOthers' | 'deferred';

/** Graph's todoTask body (todo/todo-task.ts); `listId` picks the list (default list when absent). */
export interface TodoTaskInput {
  title?: string;
  body?: { contentType: 'text' | 'html'; content: string };
  status?: TodoStatus;
  importance?: 'low' | 'normal' | 'high';
  isReminderOn?: boolean;
  categories?: string[];
  dueDateTime?: GraphDateTimeZone | null;
  completedDateTime?: GraphDateTimeZone | null;
  startDateTime?: GraphDateTimeZone | null;
  reminderDateTime?: GraphDateTimeZone | null;
  listId?: string;
  [key: string]: unknown;
}

export interface TodoTask {
  id: string;
  title: string;
  status: TodoStatus;
  importance: string;
  body: { content: string; contentType: string };
  dueDateTime?: GraphDateTimeZone;
  completedDateTime?: GraphDateTimeZone;
  lastModifiedDateTime: string;
  /** In the listing: the list the task is in. */
  listId?: string;
  [key: string]: unknown;
}

export interface TodoList {
  id: string;
  displayName: string;
  wellknownListName?: string;
  tasks: TodoTask[];
  [key: string]: unknown;
}

export type MicrosoftArea = 'calendar' | 'mail' | 'todo';

export interface MicrosoftSubscription {
  id: string;
  resource: string;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string | null;
  expirationDateTime: string;
  clientState?: string | null;
  userPrincipalName: string;
  [key: string]: unknown;
}

export interface MicrosoftDelivery {
  outcome: string;
  [key: string]: unknown;
}

export interface MicrosoftSubscriptionSettings {
  maxExpirationMinutes?: number;
  validationTimeoutMs?: number;
  batchWindowMs?: number;
  responseTimeoutMs?: number;
  retryBaseMs?: number;
  retryForMs?: number;
}

export class EmulatorError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`emulator ${method} ${url} answered ${status}: ${body.slice(0, 500)}`);
    this.name = 'EmulatorError';
  }
}

async function call<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new EmulatorError(method, url, res.status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * A data-plane request that changed something at the provider (what "our writes" means in
 * assertions): POST/PUT/PATCH/DELETE, minus reads that happen to be POSTs (search, batch
 * read, association batch read), OAuth token traffic and watch/channel bookkeeping.
 */
export function isWrite(entry: LoggedRequest): boolean {
  if (entry.method === 'GET' || entry.method === 'HEAD') return false;
  const path = entry.path.split('?')[0] ?? '';
  if (/\/search$/.test(path) || /\/batch\/read$/.test(path)) return false;
  if (path.startsWith('/oauth') || path === '/token' || path === '/revoke' || path.startsWith('/o/oauth2')) {
    return false;
  }
  if (/\/(watch|stop)$/.test(path) || path.startsWith('/calendar/v3/channels')) return false;
  return true;
}

const enc = encodeURIComponent;

/** Control-API helpers for both emulators. */
export function emulatorClient(urls: EmulatorUrls) {
  const hs = <T>(method: string, path: string, body?: unknown) => call<T>(urls.hubspot, method, path, body);
  const gg = <T>(method: string, path: string, body?: unknown) => call<T>(urls.google, method, path, body);
  const portals = '/_emulator/hubspot/portals';
  const users = '/_emulator/google/users';

  const ui = {
    create: (portalId: number, type: HubspotObjectType, properties: PropertyValues, userId?: number) =>
      hs<HubspotRecord>('POST', `${portals}/${portalId}/ui/${type}`, { properties, userId }),
    update: (
      portalId: number,
      type: HubspotObjectType,
      id: string,
      properties: PropertyValues,
      userId?: number,
    ) => hs<HubspotRecord>('PATCH', `${portals}/${portalId}/ui/${type}/${id}`, { properties, userId }),
    archive: (portalId: number, type: HubspotObjectType, id: string) =>
      hs<void>('DELETE', `${portals}/${portalId}/ui/${type}/${id}`),
    merge: (portalId: number, type: HubspotObjectType, primaryObjectId: string, objectIdToMerge: string) =>
      hs<HubspotRecord>('POST', `${portals}/${portalId}/ui/${type}/merge`, {
        primaryObjectId,
        objectIdToMerge,
      }),
    associate: (
      portalId: number,
      from: HubspotObjectType,
      fromId: string,
      to: HubspotObjectType,
      toId: string,
      types?: number[],
    ) =>
      hs<{ fromId: string; toId: string; typeIds: number[] }>(
        'PUT',
        `${portals}/${portalId}/ui/associations/${from}/${fromId}/${to}/${toId}`,
        types ? { types } : {},
      ),
  };

  const hubspot = {
    createPortal: (input: CreatePortalInput) => hs<HubspotPortalGrant>('POST', portals, input),
    portal: (portalId: number) => hs<Record<string, unknown>>('GET', `${portals}/${portalId}`),
    updatePortal: (portalId: number, settings: Partial<Omit<CreatePortalInput, 'portalId' | 'appId'>>) =>
      hs<Record<string, unknown>>('PATCH', `${portals}/${portalId}`, settings),
    /** Where the portal posts its webhooks; `null` turns them off. */
    setWebhookTarget: (portalId: number, webhookUrl: string | null) =>
      hs<Record<string, unknown>>('PATCH', `${portals}/${portalId}`, { webhookUrl }),
    /** A fresh install grant (after a revoke-token fault, say). */
    issueTokens: (portalId: number) =>
      hs<{ accessToken: string; refreshToken: string; expiresIn: number }>(
        'POST',
        `${portals}/${portalId}/tokens`,
      ),
    /** State as stored, every property, no rate limit, not in the request log. */
    objects: (portalId: number, type: HubspotObjectType, opts: { includeArchived?: boolean } = {}) =>
      hs<{ results: HubspotRecord[] }>(
        'GET',
        `${portals}/${portalId}/objects/${type}${opts.includeArchived ? '?includeArchived=true' : ''}`,
      ).then((r) => r.results),
    seed: (
      portalId: number,
      type: HubspotObjectType,
      input: { count: number; properties?: Record<string, string>; webhooks?: boolean },
    ) =>
      hs<{ count: number; firstId: string; lastId: string }>(
        'POST',
        `${portals}/${portalId}/seed/${type}`,
        input,
      ),
    webhooks: (portalId: number) =>
      hs<{ deliveries: WebhookDelivery[]; pending: number }>('GET', `${portals}/${portalId}/webhooks`),
    /** Owners through the data plane (one logged GET): the control API has no owners view. */
    owners: (accessToken: string) =>
      fetch(`${urls.hubspot}/crm/v3/owners?limit=100`, {
        headers: { authorization: `Bearer ${accessToken}` },
      })
        .then(async (r) => {
          if (!r.ok) throw new EmulatorError('GET', '/crm/v3/owners', r.status, await r.text());
          return (await r.json()) as { results: HubspotOwner[] };
        })
        .then((r) => r.results),
    ui,
    // Named shortcuts for the scenarios.
    createContact: (portalId: number, properties: PropertyValues) =>
      ui.create(portalId, 'contacts', properties),
    updateContact: (portalId: number, id: string, properties: PropertyValues) =>
      ui.update(portalId, 'contacts', id, properties),
    createCompany: (portalId: number, properties: PropertyValues) =>
      ui.create(portalId, 'companies', properties),
    updateCompany: (portalId: number, id: string, properties: PropertyValues) =>
      ui.update(portalId, 'companies', id, properties),
    createDeal: (portalId: number, properties: PropertyValues) => ui.create(portalId, 'deals', properties),
    updateDeal: (portalId: number, id: string, properties: PropertyValues) =>
      ui.update(portalId, 'deals', id, properties),
    createMeeting: (portalId: number, properties: PropertyValues) =>
      ui.create(portalId, 'meetings', properties),
    updateMeeting: (portalId: number, id: string, properties: PropertyValues) =>
      ui.update(portalId, 'meetings', id, properties),
    createTask: (portalId: number, properties: PropertyValues) => ui.create(portalId, 'tasks', properties),
    updateTask: (portalId: number, id: string, properties: PropertyValues) =>
      ui.update(portalId, 'tasks', id, properties),
  };

  const user = (email: string) => `${users}/${enc(email)}`;
  const google = {
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

  const requests = async (filter: { service?: EmulatedService; account?: string | number } = {}) => {
    const q = new URLSearchParams();
    if (filter.service) q.set('service', filter.service);
    if (filter.account !== undefined) q.set('account', String(filter.account));
    const query = q.toString();
    return call<LoggedRequest[]>(urls.hubspot, 'GET', `/_emulator/requests${query ? `?${query}` : ''}`);
  };

  return {
    urls,
    hubspot,
    google,
    /** Present when the emulators' Microsoft 365 URL is known. */
    microsoft: urls.microsoft ? microsoftControl(urls.microsoft) : undefined,
    /** Forget every account, record, fault and logged request, on both services. */
    reset: () => call<void>(urls.hubspot, 'POST', '/_emulator/reset'),
    fault: (spec: FaultSpec) => call<FaultSpec>(urls.hubspot, 'POST', '/_emulator/faults', spec),
    clearFaults: () => call<void>(urls.hubspot, 'DELETE', '/_emulator/faults'),
    requests,
    /** Data-plane writes (see isWrite), optionally for one account. */
    writes: async (filter: { service?: EmulatedService; account?: string | number } = {}) =>
      (await requests(filter)).filter(isWrite),
    /** How many data-plane writes each provider received (optionally for one account). */
    writeCounts: async (filter: { account?: string | number } = {}) => {
      const writes = (await requests(filter)).filter(isWrite);
      return {
        hubspot: writes.filter((w) => w.service === 'hubspot').length,
        google: writes.filter((w) => w.service === 'google').length,
      };
    },
  };
}

/** The Microsoft 365 emulator's control routes (`/_emulator/microsoft/…`), for one base URL. */
function microsoftControl(base: string) {
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

export type EmulatorClient = ReturnType<typeof emulatorClient>;

/** What to connect with, from a portal's OAuth grant (the emulator's createPortal): valid 30 minutes. */
export const grantCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
  accessToken: grant.accessToken,
  refreshToken: grant.refreshToken,
  expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
});
