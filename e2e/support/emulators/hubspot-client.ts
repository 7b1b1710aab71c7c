// The HubSpot emulator's control routes (`/_emulator/hubspot/…`, docs/hubspot.md).

import { call, EmulatorError } from './control';

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

/** The HubSpot emulator's control routes, for one base URL. */
export function hubspotControl(base: string) {
  const hs = <T>(method: string, path: string, body?: unknown) => call<T>(base, method, path, body);
  const portals = '/_emulator/hubspot/portals';

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

  return {
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
      fetch(`${base}/crm/v3/owners?limit=100`, {
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
}

/** What to connect with, from a portal's OAuth grant (the emulator's createPortal): valid 30 minutes. */
export const grantCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
  accessToken: grant.accessToken,
  refreshToken: grant.refreshToken,
  expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
});
