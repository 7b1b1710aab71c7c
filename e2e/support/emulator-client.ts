// A small typed client for the emulators' control API (apps/emulators/README.md,
// docs/hubspot.md, docs/google.md). Plain fetch, no vitest: the e2e harness and
// scripts/demo-world.ts both use it.

export interface EmulatorUrls {
  hubspot: string;
  google: string;
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

export interface FaultSpec {
  service: 'hubspot' | 'google';
  kind: FaultKind;
  count?: number;
  ms?: number;
  /** A HubSpot portal id or a Google user's email; absent = every account. */
  account?: string | number;
}

export interface LoggedRequest {
  at: string;
  service: 'hubspot' | 'google';
  method: string;
  path: string;
  status: number;
  account: string | null;
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

  const requests = async (filter: { service?: 'hubspot' | 'google'; account?: string | number } = {}) => {
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
    /** Forget every account, record, fault and logged request, on both services. */
    reset: () => call<void>(urls.hubspot, 'POST', '/_emulator/reset'),
    fault: (spec: FaultSpec) => call<FaultSpec>(urls.hubspot, 'POST', '/_emulator/faults', spec),
    clearFaults: () => call<void>(urls.hubspot, 'DELETE', '/_emulator/faults'),
    requests,
    /** Data-plane writes (see isWrite), optionally for one account. */
    writes: async (filter: { service?: 'hubspot' | 'google'; account?: string | number } = {}) =>
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

export type EmulatorClient = ReturnType<typeof emulatorClient>;

/** What to connect with, from a portal's OAuth grant (the emulator's createPortal): valid 30 minutes. */
export const grantCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
  accessToken: grant.accessToken,
  refreshToken: grant.refreshToken,
  expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
});
