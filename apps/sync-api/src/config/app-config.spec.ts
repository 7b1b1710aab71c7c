import { randomBytes } from 'node:crypto';
import { ConfigError } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { loadAppConfig, loadCliConfig, oauthCallbackBaseUrl } from './app-config';

const KEYS = `k1:${randomBytes(32).toString('base64')}`;

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('app config', () => {
  it('applies the defaults', () => {
    const config = loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS });
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads TRUST_PROXY: none by default, any with true, or a list of addresses', () => {
    const trust = (value?: string) =>
      loadAppConfig({
        SYNCLINE_ENCRYPTION_KEYS: KEYS,
        ...(value === undefined ? {} : { TRUST_PROXY: value }),
      }).TRUST_PROXY;
    expect(trust()).toBe(false);
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('10.0.0.0/8, 127.0.0.1')).toBe('10.0.0.0/8, 127.0.0.1');
  });

  it('reads PORT and HOST', () => {
    expect(loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, PORT: '8080', HOST: '0.0.0.0' })).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
    });
  });

  it.each(['abc', '70000', '3.5', '-1'])('rejects PORT=%s, naming PORT', (port) => {
    const error = configError(() => loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, PORT: port }));
    expect(error.message).toMatch(/^\s+PORT: /m);
  });

  it('names every bad setting at once', () => {
    const error = configError(() =>
      loadAppConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' }),
    );
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'SYNCLINE_ENCRYPTION_KEYS']) {
      expect(error.message).toMatch(new RegExp(`^\\s+${name}: `, 'm'));
    }
  });

  it('rejects encryption keys that are not 32 bytes', () => {
    const error = configError(() =>
      loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: `k1:${randomBytes(16).toString('base64')}` }),
    );
    expect(error.message).toContain('SYNCLINE_ENCRYPTION_KEYS');
  });

  it('rejects an active key that is not in the keyring, by name', () => {
    const error = configError(() =>
      loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, SYNCLINE_ENCRYPTION_ACTIVE_KEY: 'k2' }),
    );
    expect(error.message).toContain('SYNCLINE_ENCRYPTION_ACTIVE_KEY');
    expect(
      loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, SYNCLINE_ENCRYPTION_ACTIVE_KEY: 'k1' }),
    ).toBeDefined();
  });

  it("defaults the OAuth consent pages to the real providers' and the callback base to PUBLIC_BASE_URL", () => {
    const config = loadAppConfig({
      SYNCLINE_ENCRYPTION_KEYS: KEYS,
      PUBLIC_BASE_URL: 'https://sync.example.com/',
    });
    expect(config).toMatchObject({
      HUBSPOT_OAUTH_AUTHORIZE_URL: 'https://app.hubspot.com/oauth/authorize',
      GOOGLE_OAUTH_AUTHORIZE_URL: 'https://accounts.google.com/o/oauth2/v2/auth',
    });
    expect(config.HUBSPOT_OAUTH_SCOPES.split(' ')).toContain('crm.objects.contacts.write');
    expect(oauthCallbackBaseUrl(config)).toBe('https://sync.example.com');
  });

  it('reads the OAuth settings, an empty callback base meaning PUBLIC_BASE_URL', () => {
    const config = loadAppConfig({
      SYNCLINE_ENCRYPTION_KEYS: KEYS,
      HUBSPOT_OAUTH_AUTHORIZE_URL: 'http://127.0.0.1:4010/oauth/authorize',
      HUBSPOT_OAUTH_SCOPES: 'oauth crm.objects.contacts.read',
      GOOGLE_OAUTH_AUTHORIZE_URL: 'http://127.0.0.1:4020/o/oauth2/v2/auth',
      OAUTH_CALLBACK_BASE_URL: 'https://connect.example.com/',
    });
    expect(config).toMatchObject({
      HUBSPOT_OAUTH_AUTHORIZE_URL: 'http://127.0.0.1:4010/oauth/authorize',
      HUBSPOT_OAUTH_SCOPES: 'oauth crm.objects.contacts.read',
      GOOGLE_OAUTH_AUTHORIZE_URL: 'http://127.0.0.1:4020/o/oauth2/v2/auth',
    });
    expect(oauthCallbackBaseUrl(config)).toBe('https://connect.example.com');
    expect(
      oauthCallbackBaseUrl(loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, OAUTH_CALLBACK_BASE_URL: '' })),
    ).toBe('http://127.0.0.1:3000');
  });

  it.each(['HUBSPOT_OAUTH_AUTHORIZE_URL', 'GOOGLE_OAUTH_AUTHORIZE_URL', 'OAUTH_CALLBACK_BASE_URL'])(
    'rejects a %s that is not an http(s) URL, by name',
    (name) => {
      const error = configError(() => loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, [name]: 'ftp://x/y' }));
      expect(error.message).toMatch(new RegExp(`^\\s+${name}: `, 'm'));
    },
  );

  it('has no OpenID Connect sign-in and no domain restriction by default', () => {
    const config = loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, OIDC_CLIENT_ID: '' });
    expect(config.OIDC_ISSUER_URL).toBeUndefined();
    expect(config.OIDC_CLIENT_ID).toBeUndefined();
    expect(config.AUTH_ALLOWED_DOMAINS).toEqual([]);
  });

  it('reads the OpenID Connect issuer and client, and the allowed domains as a lower-cased list', () => {
    const config = loadAppConfig({
      SYNCLINE_ENCRYPTION_KEYS: KEYS,
      OIDC_ISSUER_URL: 'https://accounts.google.com',
      OIDC_CLIENT_ID: 'client.apps.googleusercontent.com',
      OIDC_CLIENT_SECRET: 'GOCSPX-secret',
      AUTH_ALLOWED_DOMAINS: ' Acme.com, @acme.co.uk,,',
    });
    expect(config).toMatchObject({
      OIDC_ISSUER_URL: 'https://accounts.google.com',
      OIDC_CLIENT_ID: 'client.apps.googleusercontent.com',
      OIDC_CLIENT_SECRET: 'GOCSPX-secret',
      AUTH_ALLOWED_DOMAINS: ['acme.com', 'acme.co.uk'],
    });
  });

  it('names the client settings an OpenID Connect issuer needs', () => {
    const error = configError(() =>
      loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, OIDC_ISSUER_URL: 'http://127.0.0.1:4020' }),
    );
    expect(error.message).toMatch(/^\s+OIDC_CLIENT_ID: /m);
    expect(error.message).toMatch(/^\s+OIDC_CLIENT_SECRET: /m);
  });

  it.each([
    ['OIDC_ISSUER_URL', 'accounts.google.com'],
    ['AUTH_ALLOWED_DOMAINS', 'acme.com, not a domain'],
  ])('rejects %s=%s, by name', (name, value) => {
    const error = configError(() => loadAppConfig({ SYNCLINE_ENCRYPTION_KEYS: KEYS, [name]: value }));
    expect(error.message).toMatch(new RegExp(`^\\s+${name}: `, 'm'));
  });

  it('lets the CLI run without encryption keys', () => {
    expect(loadCliConfig({ DATABASE_URL: 'postgresql://db/x' })).toMatchObject({
      DATABASE_URL: 'postgresql://db/x',
    });
    expect(configError(() => loadCliConfig({ DATABASE_URL: 'mysql://db/x' })).message).toContain(
      'DATABASE_URL',
    );
  });
});
