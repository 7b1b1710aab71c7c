import { ConfigError } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { loadWorkersConfig, workersKeyring } from './workers-config';

describe('loadWorkersConfig', () => {
  it('has defaults for every workers setting', () => {
    const config = loadWorkersConfig({});
    expect(config).toMatchObject({
      LOG_RETENTION_HOURS: 168,
      RETENTION_INTERVAL_MS: 3_600_000,
      WORKER_CONCURRENCY: 10,
      PULL_INTERVAL_MS: 30_000,
      SYNC_COALESCE_MS: 50,
      METRICS_PORT: 9464,
      HUBSPOT_API_BASE_URL: 'https://api.hubapi.com',
    });
    // The keyring is optional: only opening a connection's credentials needs it.
    expect(config.SYNCLINE_ENCRYPTION_KEYS).toBeUndefined();
    expect(workersKeyring(config)).toBeUndefined();
  });

  it('builds the keyring from its settings and names a wrong active key', () => {
    const keys = `k1:${Buffer.alloc(32, 1).toString('base64')},k2:${Buffer.alloc(32, 2).toString('base64')}`;
    const config = loadWorkersConfig({
      SYNCLINE_ENCRYPTION_KEYS: keys,
      SYNCLINE_ENCRYPTION_ACTIVE_KEY: 'k2',
    });
    const keyring = workersKeyring(config);
    expect(keyring?.seal('x', 'aad').keyId).toBe('k2');
    expect(() =>
      loadWorkersConfig({ SYNCLINE_ENCRYPTION_KEYS: keys, SYNCLINE_ENCRYPTION_ACTIVE_KEY: 'k3' }),
    ).toThrow(/SYNCLINE_ENCRYPTION_ACTIVE_KEY/);
    expect(() => loadWorkersConfig({ SYNCLINE_ENCRYPTION_KEYS: 'nonsense' })).toThrow(
      /SYNCLINE_ENCRYPTION_KEYS/,
    );
  });

  it('bounds the pull interval and the coalescing window', () => {
    expect(loadWorkersConfig({ SYNC_COALESCE_MS: '0', METRICS_PORT: '0' })).toMatchObject({
      SYNC_COALESCE_MS: 0,
      METRICS_PORT: 0,
    });
    expect(() => loadWorkersConfig({ PULL_INTERVAL_MS: '10' })).toThrow(/PULL_INTERVAL_MS/);
  });

  it('reads numbers from strings, and 0 hours means keep forever', () => {
    const config = loadWorkersConfig({
      LOG_RETENTION_HOURS: '0',
      RETENTION_INTERVAL_MS: '60000',
      WORKER_CONCURRENCY: '4',
    });
    expect(config).toMatchObject({
      LOG_RETENTION_HOURS: 0,
      RETENTION_INTERVAL_MS: 60_000,
      WORKER_CONCURRENCY: 4,
    });
  });

  it('treats an empty setting as unset, not as 0', () => {
    expect(loadWorkersConfig({ LOG_RETENTION_HOURS: '' }).LOG_RETENTION_HOURS).toBe(168);
  });

  it('names every bad setting', () => {
    const load = () =>
      loadWorkersConfig({ LOG_RETENTION_HOURS: '-1', WORKER_CONCURRENCY: 'many', REDIS_URL: 'http://x' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/LOG_RETENTION_HOURS[\s\S]*REDIS_URL|REDIS_URL[\s\S]*LOG_RETENTION_HOURS/);
    expect(load).toThrow(/WORKER_CONCURRENCY/);
  });
});
