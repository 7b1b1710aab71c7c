import { randomBytes } from 'node:crypto';
import { ConfigError } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { loadAppConfig, loadCliConfig } from './app-config';

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

  it('lets the CLI run without encryption keys', () => {
    expect(loadCliConfig({ DATABASE_URL: 'postgresql://db/x' })).toMatchObject({
      DATABASE_URL: 'postgresql://db/x',
    });
    expect(configError(() => loadCliConfig({ DATABASE_URL: 'mysql://db/x' })).message).toContain(
      'DATABASE_URL',
    );
  });
});
