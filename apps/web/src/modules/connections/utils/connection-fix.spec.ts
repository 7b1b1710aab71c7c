import { describe, expect, it } from 'vitest';
import { oauthErrorMessage, parseConnectionsSearch } from './connect-outcome';
import { connectionFix } from './connection-fix';
import { connectionName, reconnectTarget } from './connection-name';

const c = (status: string, lastErrorCode: string | null = null, hasCredentials = true) => ({
  status,
  hasCredentials,
  state: { lastErrorCode },
});

describe('connectionFix', () => {
  it('says what to do for a connection that needs an admin', () => {
    expect(connectionFix(c('needs_reauth', 'AuthRevoked'), 'HubSpot')).toMatchObject({
      action: 'reconnect',
      tone: 'danger',
      fix: expect.stringContaining('sign in to HubSpot'),
    });
    expect(connectionFix(c('live', null, false), 'Gmail')?.action).toBe('reconnect');
    const stopped = connectionFix(c('error', 'NotFound'), 'Google Calendar');
    expect(stopped).toMatchObject({ action: 'resume', tone: 'danger' });
    expect(stopped?.title).toMatch(/gone from the account, and the sync stopped/);
    expect(connectionFix(c('error'), 'HubSpot')?.title).toBe('The sync stopped on an error');
  });

  it('explains every error code the workers record, and an unknown one by its code', () => {
    for (const code of ['RateLimited', 'Transient', 'CursorInvalid', 'NotFound', 'Conflict', 'Validation']) {
      const fix = connectionFix(c('live', code), 'HubSpot');
      expect(fix, code).not.toBeNull();
      expect(fix!.fix.length, code).toBeGreaterThan(20);
      expect(fix!.title + fix!.fix, code).not.toContain('{provider}');
    }
    expect(connectionFix(c('live', 'CursorInvalid'), 'HubSpot')?.action).toBe('resync');
    expect(connectionFix(c('live', 'Mystery'), 'HubSpot')?.title).toContain('Mystery');
  });

  it('says nothing for a healthy or disconnected connection', () => {
    expect(connectionFix(c('live'), 'HubSpot')).toBeNull();
    expect(connectionFix(c('disconnected', 'AuthRevoked', false), 'HubSpot')).toBeNull();
  });
});

describe('connectionName and reconnectTarget', () => {
  it('names a connection by its name, else provider and account', () => {
    expect(connectionName({ displayName: 'CRM A', provider: 'hubspot', externalAccountId: '3301' })).toBe(
      'CRM A',
    );
    expect(connectionName({ displayName: null, provider: 'hubspot', externalAccountId: '3301' })).toBe(
      'HubSpot 3301',
    );
    expect(
      connectionName({ displayName: null, provider: 'google-calendar', externalAccountId: 'a@b.example' }),
    ).toBe('Google Calendar a@b.example');
  });

  it("reconnects a Google account's every product in one consent", () => {
    const all = [
      { provider: 'google-calendar', externalAccountId: 'a@b.example', status: 'needs_reauth' },
      { provider: 'gmail', externalAccountId: 'a@b.example', status: 'needs_reauth' },
      { provider: 'google-tasks', externalAccountId: 'a@b.example', status: 'disconnected' },
      { provider: 'google-tasks', externalAccountId: 'z@b.example', status: 'live' },
    ];
    expect(reconnectTarget(all[0]!, all)).toEqual({
      provider: 'google',
      products: ['google-calendar', 'gmail'],
    });
    expect(reconnectTarget({ provider: 'hubspot', externalAccountId: '1' }, all)).toEqual({
      provider: 'hubspot',
    });
  });

  it("reconnects a Microsoft 365 account's every product in one consent, and names them as Outlook does", () => {
    const account = '5b3c1f1e-8d0a-4f7e-9c61-0f2d7a1b9e44:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
    const all = [
      { provider: 'microsoft-mail', externalAccountId: account, status: 'needs_reauth' },
      { provider: 'microsoft-todo', externalAccountId: account, status: 'needs_reauth' },
      { provider: 'microsoft-calendar', externalAccountId: account, status: 'disconnected' },
      { provider: 'google-calendar', externalAccountId: 'a@b.example', status: 'needs_reauth' },
    ];
    expect(reconnectTarget(all[0]!, all)).toEqual({
      provider: 'microsoft',
      products: ['microsoft-mail', 'microsoft-todo'],
    });
    expect(
      connectionName({
        displayName: null,
        provider: 'microsoft-todo',
        externalAccountId: account,
        accountAddress: 'rita@contoso.example',
      }),
    ).toBe('Microsoft To Do rita@contoso.example');
  });
});

describe('parseConnectionsSearch', () => {
  const id1 = '0190c6a2-1111-7000-8000-000000000001';
  const id2 = '0190C6A2-2222-7000-8000-000000000002';
  it('reads connected ids and an error code, dropping what is neither', () => {
    expect(parseConnectionsSearch({ connected: `${id1},${id2},nope` })).toEqual({
      connected: [id1, id2.toLowerCase()],
    });
    expect(parseConnectionsSearch({ connected: [id1, 5] })).toEqual({ connected: [id1] });
    expect(parseConnectionsSearch({ connected: 'x', oauthError: 'oauth_consent_denied' })).toEqual({
      oauthError: 'oauth_consent_denied',
    });
    expect(parseConnectionsSearch({ oauthError: '<script>' })).toEqual({});
    expect(parseConnectionsSearch({ connected: id1, reconnect: 1 })).toEqual({
      connected: [id1],
      reconnect: true,
    });
    expect(parseConnectionsSearch({ reconnect: 'yes' })).toEqual({});
    expect(parseConnectionsSearch({})).toEqual({});
  });

  it('words every refusal with what to do, and an unknown one by its code', () => {
    for (const code of [
      'oauth_consent_denied',
      'oauth_state_invalid',
      'oauth_failed',
      'forbidden',
      'connection_disconnected',
      'unavailable',
    ])
      expect(oauthErrorMessage(code).title, code).not.toMatch(/Nothing was connected/);
    expect(oauthErrorMessage('internal').message).toContain('internal');
  });
});
