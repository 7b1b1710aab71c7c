export { createGmailConnector, type GmailOptions, gmailConnector } from './gmail.connector';
