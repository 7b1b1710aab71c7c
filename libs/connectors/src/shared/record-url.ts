/** Where people open a provider's own pages, as opposed to its API. */
export interface ProviderWebUrls {
  /** HubSpot's app, e.g. `https://app.hubspot.com` (the emulator serves record pages at its own origin). */
  hubspotAppUrl: string;
}

export interface SourceRecordRef {
  provider: string | null;
  /** The unified type the record is linked as. */
  entityType: string;
  externalId: string;
  /** The provider's account: HubSpot's portal id, Google's address. */
  account: string | null;
}

/** HubSpot's object type ids, as its record pages spell them (`/record/0-1/…` is a contact). */
const HUBSPOT_OBJECT_TYPE_IDS: Record<string, string> = { person: '0-1', company: '0-2', deal: '0-3' };

/**
 * The page that shows a linked record in its own system, or null when the provider has none a
 * person could open (a removed connection, an engagement HubSpot shows only on its record).
 */
export function sourceRecordUrl(ref: SourceRecordRef, urls: ProviderWebUrls): string | null {
  const id = encodeURIComponent(ref.externalId);
  if (ref.provider === 'hubspot') {
    const objectType = HUBSPOT_OBJECT_TYPE_IDS[ref.entityType];
    if (!objectType || !ref.account) return null;
    const base = urls.hubspotAppUrl.replace(/\/+$/, '');
    return `${base}/contacts/${encodeURIComponent(ref.account)}/record/${objectType}/${id}`;
  }
  const account = ref.account ? `?authuser=${encodeURIComponent(ref.account)}` : '';
  if (ref.provider === 'google-calendar') {
    // Google Calendar's event links: base64 of "<event id> <calendar id>" (the account's primary calendar).
    if (!ref.account) return null;
    const eid = Buffer.from(`${ref.externalId} ${ref.account}`).toString('base64url');
    return `https://calendar.google.com/calendar/event?eid=${eid}`;
  }
  if (ref.provider === 'gmail') return `https://mail.google.com/mail/${account}#all/${id}`;
  if (ref.provider === 'google-tasks') {
    const taskId = ref.externalId.slice(ref.externalId.lastIndexOf('/') + 1);
    return `https://tasks.google.com/task/${encodeURIComponent(taskId)}`;
  }
  if (ref.provider?.startsWith('microsoft-')) return microsoftRecordUrl(ref);
  return null;
}

/** The tenant of personal Microsoft accounts (outlook.com), whose pages are on outlook.live.com. */
const CONSUMERS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

/**
 * Outlook on the web's item links (the form of Graph's own `webLink`), on outlook.live.com for a
 * personal account and outlook.office.com for a work one; To Do's task page. The account is
 * `<tenant id>:<object id>`. The id is Graph's immutable id, as the connectors read it.
 */
function microsoftRecordUrl(ref: SourceRecordRef): string | null {
  const id = encodeURIComponent(ref.externalId);
  const personal = ref.account?.startsWith(`${CONSUMERS_TENANT}:`) === true;
  const outlook = personal ? 'https://outlook.live.com' : 'https://outlook.office.com';
  if (ref.provider === 'microsoft-calendar') return `${outlook}/calendar/item/${id}`;
  if (ref.provider === 'microsoft-mail') return `${outlook}/mail/deeplink/read/${id}`;
  if (ref.provider === 'microsoft-todo') {
    // The task's own id, without the list it is kept under (the connector's id may carry both).
    const taskId = ref.externalId.slice(ref.externalId.lastIndexOf('/') + 1);
    return `https://to-do.office.com/tasks/id/${encodeURIComponent(taskId)}/details`;
  }
  return null;
}
