import { createHmac } from 'node:crypto';

/**
 * HubSpot webhook batches as HubSpot sends them, for the API's tests: its v3 signature written
 * out here rather than borrowed from the connector under test, and a contact property change.
 */
export function hubspotSignedHeaders(
  body: string,
  options: { secret: string; url: string; at?: number },
): Record<string, string> {
  const timestamp = String(options.at ?? Date.now());
  const signature = createHmac('sha256', options.secret)
    .update(`POST${options.url}${body}${timestamp}`, 'utf8')
    .digest('base64');
  return {
    'content-type': 'application/json',
    'x-hubspot-signature-v3': signature,
    'x-hubspot-request-timestamp': timestamp,
  };
}

let nextEventId = 1;

/** A `contact.propertyChange` notification, each with an event id of its own. */
export function contactPropertyChange(change: {
  portalId: number;
  objectId: number | string;
  propertyName: string;
  propertyValue: string;
  sourceId?: string;
}) {
  return {
    eventId: nextEventId++,
    subscriptionId: 7,
    portalId: change.portalId,
    appId: 999,
    occurredAt: Date.now() - 1_000,
    subscriptionType: 'contact.propertyChange',
    attemptNumber: 0,
    objectId: change.objectId,
    changeSource: 'CRM_UI',
    sourceId: change.sourceId ?? 'userId:1',
    propertyName: change.propertyName,
    propertyValue: change.propertyValue,
  };
}
