import { ConfigError } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { loadWorkersConfig } from './workers-config';

describe('loadWorkersConfig', () => {
  it('has defaults for every workers setting', () => {
    const config = loadWorkersConfig({});
    expect(config).toMatchObject({
      LOG_RETENTION_HOURS: 168,
      RETENTION_INTERVAL_MS: 3_600_000,
      WORKER_CONCURRENCY: 10,
    });
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
