export { hubspotConnector } from './hubspot.connector';
export {
  HUBSPOT_OBJECT_TYPES,
  type HubspotProperty,
  hubspotFieldMap,
  listHubspotProperties,
  type MappedField,
  propertyTypesFor,
} from './hubspot-properties';
