export { hubspotConnector } from './hubspot.connector';
export { isSynclineProperty, SYNCLINE_PROPERTY_PREFIX } from './hubspot.mapper';
export {
  INSIGHT_OBJECT_TYPES,
  INSIGHT_PROPERTIES,
  INSIGHT_PROPERTY_GROUP,
  type InsightPropertyDefinition,
  insightValuesProblem,
  toHubspotInsightProperties,
} from './hubspot-insight-properties';
export { ensureInsightProperties, pushInsights } from './hubspot-insights';
export {
  checkHubspotFieldMappings,
  HUBSPOT_OBJECT_TYPES,
  type HubspotProperty,
  hubspotFieldMap,
  listHubspotProperties,
  type MappedField,
  propertyTypesFor,
} from './hubspot-properties';
