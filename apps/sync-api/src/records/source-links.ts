import { type ProviderWebUrls, sourceRecordUrl } from '@syncline/connectors';
import type { AppConfig } from '../config/app-config';

/** Where people open the providers' pages, from the API's settings. */
export const providerWebUrls = (config: AppConfig): ProviderWebUrls => ({
  hubspotAppUrl: config.HUBSPOT_APP_URL,
});

/** A record's links as the API shows them: the connection's account swapped for the page that opens the record there. */
export function withUrls<L extends { provider: string | null; externalId: string; account: string | null }>(
  links: L[],
  entityType: string,
  urls: ProviderWebUrls,
): (Omit<L, 'account'> & { url: string | null })[] {
  return links.map(({ account, ...link }) => ({
    ...link,
    url: sourceRecordUrl({ provider: link.provider, externalId: link.externalId, account, entityType }, urls),
  }));
}
