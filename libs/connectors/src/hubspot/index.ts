export { hubspotConnector } from './hubspot.connector';
