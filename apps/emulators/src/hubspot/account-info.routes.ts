import type { FastifyInstance } from 'fastify';
import { authOf } from './data-plane.hooks';

/**
 * `GET /account-info/v3/details`: the account the bearer token belongs to, with every field
 * HubSpot marks required (developers.hubspot.com, Account information API, "Retrieve account
 * details"). It answers for any working token, a private app's included; it is how a private
 * app's token names its portal, since the OAuth token-info route knows only OAuth tokens.
 */
export function registerAccountInfoRoutes(api: FastifyInstance): void {
  api.get('/account-info/v3/details', async (req) => {
    const { portal } = authOf(req);
    return {
      portalId: portal.portalId,
      accountType: 'STANDARD',
      timeZone: 'US/Eastern',
      companyCurrency: 'USD',
      additionalCurrencies: [],
      utcOffset: '-05:00',
      utcOffsetMilliseconds: -18_000_000,
      uiDomain: 'app.hubspot.com',
      dataHostingLocation: 'na1',
    };
  });
}
