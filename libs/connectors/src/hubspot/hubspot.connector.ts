import type { Connector } from '../contract/connector';
import { OBJECT_SPECS } from './hubspot.mapper';
import { identifyHubspotAccount } from './hubspot-account';
import { ensureInsightProperties, pushInsights } from './hubspot-insights';
import { MERGEABLE_OBJECTS, pushAssociations, pushWrites } from './hubspot-push';
import { backfillPage, pullPage } from './hubspot-sync';
import { parseHubspotWebhook, verifyHubspotWebhook } from './hubspot-webhook';

/** HubSpot CRM v3 through the official SDK: contacts, companies, deals, meetings, tasks, emails. */
export const hubspotConnector: Connector = {
  provider: 'hubspot',
  entities: OBJECT_SPECS.map((s) => s.entityType),
  writable: OBJECT_SPECS.map((s) => s.entityType),
  merges: OBJECT_SPECS.filter((s) => MERGEABLE_OBJECTS.has(s.objectType)).map((s) => s.entityType),
  backfill: backfillPage,
  pull: pullPage,
  verifyWebhook: verifyHubspotWebhook,
  parseWebhook: parseHubspotWebhook,
  push: pushWrites,
  pushAssociations,
  ensureInsightProperties,
  pushInsights,
  identifyAccount: identifyHubspotAccount,
};
