import { baseEnvSchema, parseEnv } from '@syncline/core';
import { z } from 'zod';

// An empty variable (`LOG_RETENTION_HOURS=`) means "not set", not 0: z.coerce would turn ''
// into 0, which for the retention setting silently means "keep forever".
const wholeNumber = (defaultValue: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
    z.coerce.number().int().min(min).max(max).default(defaultValue),
  );

/** Every setting the workers read, parsed once at start. */
export const workersConfigSchema = baseEnvSchema.extend({
  /** How long change events are kept once every consumer group is past them; 0 keeps them forever. */
  LOG_RETENTION_HOURS: wholeNumber(168, 0),
  /** How often the retention job runs. */
  RETENTION_INTERVAL_MS: wholeNumber(3_600_000, 1_000),
  /** Jobs one process runs at once per queue, unless the queue fixes its own. */
  WORKER_CONCURRENCY: wholeNumber(10, 1, 1_000),
});
export type WorkersConfig = Readonly<z.output<typeof workersConfigSchema>>;

/** Injection token for the parsed WorkersConfig. */
export const WORKERS_CONFIG = Symbol('WORKERS_CONFIG');

/** Throws a ConfigError naming every bad setting. */
export function loadWorkersConfig(env: NodeJS.ProcessEnv = process.env): WorkersConfig {
  return Object.freeze(parseEnv(workersConfigSchema, env));
}
