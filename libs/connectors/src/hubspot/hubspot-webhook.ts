import { createHmac, timingSafeEqual } from 'node:crypto';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import type {
  ConnectorResult,
  WebhookContext,
  WebhookOutcome,
  WebhookRequest,
  WebhookSecrets,
} from '../contract/connector';
import {
  fieldsOfProperty,
  fromHubspotValue,
  type ObjectSpec,
  specOfObject,
  specsFor,
} from './hubspot.mapper';
import { tombstone } from './hubspot-sync';

/** HubSpot: reject v3 requests older than five minutes. */
export const MAX_WEBHOOK_AGE_MS = 5 * 60_000;

const header = (request: WebhookRequest, name: string): string | undefined =>
  Object.entries(request.headers).find(([k]) => k.toLowerCase() === name)?.[1];

const refuse = (message: string) => err({ code: 'Validation' as const, message });

/** v3: base64 HMAC-SHA256 keyed by the client secret over method + uri + body + timestamp. */
export function signV3(secret: string, method: string, url: string, body: string, timestamp: string): string {
  return createHmac('sha256', secret).update(`${method}${url}${body}${timestamp}`, 'utf8').digest('base64');
}

export function verifyHubspotWebhook(
  request: WebhookRequest,
  secrets: WebhookSecrets,
): ConnectorResult<void> {
  if (!secrets.clientSecret) return refuse('no client secret to verify HubSpot webhooks with');
  const signature = header(request, 'x-hubspot-signature-v3');
  const timestamp = header(request, 'x-hubspot-request-timestamp');
  if (!signature || !timestamp)
    return refuse('missing X-HubSpot-Signature-v3 or X-HubSpot-Request-Timestamp');
  const sentAt = Number(timestamp);
  if (!Number.isFinite(sentAt)) return refuse('malformed X-HubSpot-Request-Timestamp');
  if (Math.abs(request.receivedAt.getTime() - sentAt) > MAX_WEBHOOK_AGE_MS)
    return refuse('webhook timestamp is older than five minutes (or in the future)');
  const expected = Buffer.from(
    signV3(secrets.clientSecret, request.method.toUpperCase(), request.url, request.rawBody, timestamp),
  );
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return refuse('bad webhook signature');
  return ok(undefined);
}

/** One event of a webhook POST, as HubSpot sends it (only what we read). */
interface HubspotWebhookEvent {
  eventId?: number;
  occurredAt: number;
  subscriptionType: string;
  objectId?: number;
  changeSource?: string;
  sourceId?: string;
  propertyName?: string;
  propertyValue?: string;
  primaryObjectId?: number;
  mergedObjectIds?: number[];
  newObjectId?: number;
  associationType?: string;
  fromObjectId?: number;
  toObjectId?: number;
  associationRemoved?: boolean;
}

const OBJECT_OF_SUBSCRIPTION: Record<string, string> = {
  contact: 'contacts',
  company: 'companies',
  deal: 'deals',
};

/**
 * An association change names no state, only that a pair changed: it becomes a fieldless
 * notification of the record that carries the pair (a contact its companies, a deal its
 * contacts and companies; see ObjectSpec.associations), marked `associationChange`, and the
 * sync stage has the connection pulled: the pull reads the record (whose modified date the
 * change moved) with all of its associations. The inverse direction is the same pair.
 */
function associationNotice(
  event: HubspotWebhookEvent,
  ctx: WebhookContext,
  origin: Record<string, unknown>,
): SourceChangeInput | undefined {
  const [fromName, toName] = (event.associationType ?? '').toLowerCase().split('_to_');
  const specs = specsFor(ctx.fieldMappings);
  const from = specOfObject(OBJECT_OF_SUBSCRIPTION[fromName ?? ''] ?? '', specs);
  const to = specOfObject(OBJECT_OF_SUBSCRIPTION[toName ?? ''] ?? '', specs);
  if (!from || !to || event.fromObjectId === undefined || event.toObjectId === undefined) return undefined;
  const carried = (carrier: ObjectSpec, other: ObjectSpec) =>
    carrier.associations?.some((a) => a.objectType === other.objectType) === true;
  const [carrier, carrierId, otherId] = carried(from, to)
    ? [from, event.fromObjectId, event.toObjectId]
    : carried(to, from)
      ? [to, event.toObjectId, event.fromObjectId]
      : [undefined, 0, 0];
  if (!carrier) return undefined;
  const at = event.occurredAt;
  return {
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
    entityType: carrier.entityType,
    externalId: String(carrierId),
    op: 'upsert',
    // Both directions of one change are one notification.
    eventKey: `${carrier.objectType}:${carrierId}:association:${at}:${otherId}:${event.associationRemoved ? 'removed' : 'added'}`,
    eventTime: new Date(at),
    fields: {},
    origin: { ...origin, partial: true, associationChange: true },
  };
}

/**
 * A merge, read as what became of each merged-away record: it is not deleted (a delete would
 * set the delete policy of every other system going) but redirected: op `merge` on the
 * merged id, `fields.mergedInto` the surviving record, one change per merged id, each on that
 * record's own partition after its earlier changes. Its id answers as the survivor from now
 * on; the survivor's own changes (moved values) come as its property changes or the next pull.
 * Partial: it names no key, so identity never makes a record of it that it does not know.
 * HubSpot's `newObjectId` is the survivor where it differs from `primaryObjectId` (a merge that
 * made a new record); `mergedObjectIds` may list the survivor too, which is not redirected.
 */
function mergeRedirects(
  spec: ObjectSpec,
  event: HubspotWebhookEvent,
  base: Omit<SourceChangeInput, 'externalId' | 'op' | 'eventKey' | 'fields'> & {
    origin: Record<string, unknown>;
  },
): SourceChangeInput[] {
  const survivor = event.newObjectId ?? event.primaryObjectId ?? event.objectId;
  if (survivor === undefined) return [];
  const into = String(survivor);
  const merged = [...new Set([...(event.mergedObjectIds ?? []), event.primaryObjectId].map(String))]
    .filter((id) => id !== 'undefined' && id !== into)
    .sort();
  return merged.map((id) => ({
    ...base,
    origin: { ...base.origin, partial: true },
    externalId: id,
    op: 'merge' as const,
    eventKey: `${spec.objectType}:${id}:merged-into:${into}`,
    fields: { mergedInto: into },
  }));
}

/**
 * Event keys: a property change is `<type>:<id>:<occurredAt>:<property>` (stable across
 * redeliveries and duplicate subscriptions; deliberately not the pull's key, since a pull
 * carries every field and one webhook only one, so neither may shadow the other at the
 * log's door). A deletion uses the pull's tombstone key (occurredAt = archivedAt), so a
 * pulled and a pushed delete are one event. Creation is an upsert with no fields (the
 * property changes of the creation carry the values).
 * Webhook changes carry no `providerVersion`: an event's occurredAt is not the record's
 * updatedAt (versionOf), and a version that is not the record's would make every conditional
 * write based on it a Conflict. The next pull reports the true version.
 */
export function parseHubspotWebhook(
  request: WebhookRequest,
  ctx: WebhookContext,
): ConnectorResult<WebhookOutcome> {
  let events: HubspotWebhookEvent[];
  try {
    const parsed: unknown = JSON.parse(request.rawBody);
    if (!Array.isArray(parsed)) return refuse('HubSpot webhook body is not an array');
    events = parsed as HubspotWebhookEvent[];
  } catch {
    return refuse('HubSpot webhook body is not JSON');
  }
  const changes: SourceChangeInput[] = [];
  for (const event of events) {
    if (typeof event !== 'object' || event === null || typeof event.subscriptionType !== 'string') continue;
    const [object, kind] = event.subscriptionType.split('.');
    const spec = specOfObject(OBJECT_OF_SUBSCRIPTION[object ?? ''] ?? '', specsFor(ctx.fieldMappings));
    if (!spec || typeof event.occurredAt !== 'number') continue;
    const change = eventChange(spec, kind ?? '', event, ctx);
    if (Array.isArray(change)) changes.push(...change);
    else if (change) changes.push(change);
  }
  return ok({ kind: 'changes', changes });
}

function eventChange(
  spec: ObjectSpec,
  kind: string,
  event: HubspotWebhookEvent,
  ctx: WebhookContext,
): SourceChangeInput | SourceChangeInput[] | undefined {
  const origin: Record<string, unknown> = {
    ...(event.changeSource ? { changeSource: event.changeSource } : {}),
    ...(event.sourceId !== undefined ? { sourceId: String(event.sourceId) } : {}),
    ...(event.eventId !== undefined ? { eventId: event.eventId } : {}),
    ...(ctx.appId && event.sourceId !== undefined ? { ours: String(event.sourceId) === ctx.appId } : {}),
  };
  const at = event.occurredAt;
  const base = {
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
    entityType: spec.entityType,
    eventTime: new Date(at),
    origin,
  };
  const id = event.objectId !== undefined ? String(event.objectId) : undefined;
  switch (kind) {
    case 'propertyChange': {
      if (!id || !event.propertyName) return undefined;
      const mapped = fieldsOfProperty(spec, event.propertyName);
      if (mapped.length === 0) return undefined; // a property we do not map
      return {
        ...base,
        origin: { ...origin, partial: true },
        externalId: id,
        op: 'upsert',
        eventKey: `${spec.objectType}:${id}:${at}:${event.propertyName}`,
        fields: Object.fromEntries(
          mapped.map(([field, valueKind]) => [field, fromHubspotValue(event.propertyValue, valueKind)]),
        ),
        fieldTimes: Object.fromEntries(mapped.map(([field]) => [field, new Date(at)])),
      };
    }
    case 'creation':
    case 'restore':
      if (!id) return undefined;
      return {
        ...base,
        origin: { ...origin, partial: true },
        externalId: id,
        op: 'upsert',
        eventKey: `${spec.objectType}:${id}:${kind}:${at}`,
        fields: {},
      };
    case 'deletion':
      return id ? tombstone(ctx, spec, id, at, origin) : undefined;
    case 'merge':
      return mergeRedirects(spec, event, base);
    case 'associationChange':
      return associationNotice(event, ctx, origin);
    default:
      return undefined; // other kinds: not modelled
  }
}
