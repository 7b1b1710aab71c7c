import { randomBytes } from 'node:crypto';
import { emulatorControl, type RunningEmulators, startEmulators } from '@syncline/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gmailConnector } from '../gmail';
import { googleCalendarConnector } from '../google-calendar';
import { googleTasksConnector } from '../google-tasks';
import { hubspotConnector } from '../hubspot';
import type { ProviderEndpoints } from './connector';

/** identifyAccount of every connector, through the official SDKs, against the emulators. */
describe('identifyAccount: whose account the credentials open, as the provider says', () => {
  let emulators: RunningEmulators;
  let endpoints: ProviderEndpoints;
  let nextPortal = 30_000 + Math.floor(Math.random() * 5_000);

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    endpoints = {
      hubspotBaseUrl: emulators.hubspotUrl,
      googleRootUrl: `${emulators.googleUrl}/`,
      googleTokenUrl: `${emulators.googleUrl}/token`,
      microsoftGraphUrl: emulators.microsoftUrl,
    };
  });
  afterAll(async () => {
    await emulators.close();
  });

  const control = <T>(base: string, path: string, body: unknown = {}): Promise<T> =>
    emulatorControl(base)<T>('POST', path, body);
  const portal = async () => {
    const portalId = nextPortal++;
    const grant = await control<{ accessToken: string; refreshToken: string }>(
      emulators.hubspotUrl,
      '/_emulator/hubspot/portals',
      { portalId, appId: 5001, clientSecret: 'shh' },
    );
    const pat = await control<{ accessToken: string }>(
      emulators.hubspotUrl,
      `/_emulator/hubspot/portals/${portalId}/private-apps`,
    );
    return { portalId, ...grant, privateAppToken: pat.accessToken };
  };
  const googleUser = (email: string, scope?: string) =>
    control<{ email: string; accessToken: string; refreshToken: string }>(
      emulators.googleUrl,
      '/_emulator/google/users',
      { email, ...(scope ? { scope } : {}) },
    );
  const soon = () => new Date(Date.now() + 1_800_000).toISOString();

  it('hubspot: a private app token by its account details, OAuth tokens by their token info', async () => {
    const a = await portal();
    expect(await hubspotConnector.identifyAccount({ privateAppToken: a.privateAppToken }, endpoints)).toEqual(
      {
        ok: true,
        value: { accountId: String(a.portalId), proof: 'hubspot_account_info' },
      },
    );
    expect(
      await hubspotConnector.identifyAccount(
        { accessToken: a.accessToken, refreshToken: a.refreshToken, expiresAt: soon() },
        endpoints,
      ),
    ).toEqual({ ok: true, value: { accountId: String(a.portalId), proof: 'hubspot_token_info' } });
    expect(await hubspotConnector.identifyAccount({ accessToken: a.accessToken }, endpoints)).toMatchObject({
      ok: true,
      value: { accountId: String(a.portalId) },
    });
  });

  it('hubspot: refuses unknown tokens, and tokens of two portals', async () => {
    const a = await portal();
    const b = await portal();
    for (const credentials of [
      { privateAppToken: 'pat-na1-00000000-0000-4000-8000-000000000000' },
      { accessToken: 'C-unknown', refreshToken: a.refreshToken },
      { accessToken: a.accessToken, refreshToken: 'not-a-refresh-token' },
      // A private app's token is no OAuth access token.
      { accessToken: a.privateAppToken },
    ]) {
      const proven = await hubspotConnector.identifyAccount(credentials, endpoints);
      expect(proven, JSON.stringify(credentials)).toMatchObject({
        ok: false,
        error: { code: 'AuthRevoked' },
      });
    }
    const mixed = await hubspotConnector.identifyAccount(
      { accessToken: a.accessToken, refreshToken: b.refreshToken },
      endpoints,
    );
    expect(mixed).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(!mixed.ok && mixed.error.message).toContain(String(b.portalId));
  });

  it('hubspot: an access token past its expiresAt is never sent again; its refresh token speaks for it', async () => {
    const a = await portal();
    const proven = await hubspotConnector.identifyAccount(
      { accessToken: 'C-long-gone', refreshToken: a.refreshToken, expiresAt: '2020-01-01T00:00:00.000Z' },
      endpoints,
    );
    expect(proven).toEqual({
      ok: true,
      value: { accountId: String(a.portalId), proof: 'hubspot_token_info' },
    });
  });

  it('google products: the address userinfo names, lower case; refused, or unnamed without the email scope', async () => {
    const address = `Dana.${randomBytes(3).toString('hex')}@Proof.Example`;
    const user = await googleUser(address);
    const bare = await googleUser(
      `bare-${randomBytes(3).toString('hex')}@proof.example`,
      'https://www.googleapis.com/auth/calendar',
    );
    for (const connector of [googleCalendarConnector, gmailConnector, googleTasksConnector]) {
      expect(
        await connector.identifyAccount(
          { accessToken: user.accessToken, refreshToken: user.refreshToken, expiresAt: soon() },
          endpoints,
        ),
        connector.provider,
      ).toEqual({
        ok: true,
        value: { accountId: address.toLowerCase(), proof: 'google_userinfo', address: address.toLowerCase() },
      });
      expect(await connector.identifyAccount({ accessToken: 'ya29.unknown' }, endpoints)).toMatchObject({
        ok: false,
        error: { code: 'AuthRevoked' },
      });
      expect(await connector.identifyAccount({ accessToken: bare.accessToken }, endpoints)).toMatchObject({
        ok: false,
        error: { code: 'Validation' },
      });
      expect(await connector.identifyAccount({ privateAppToken: 'pat-na1-x' }, endpoints)).toMatchObject({
        ok: false,
        error: { code: 'Validation' },
      });
    }
  });
});
