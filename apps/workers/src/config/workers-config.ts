import { baseEnvSchema, Keyring, keyringEnvSchema, parseEnv, providerEnvSchema } from '@syncline/core';
import { z } from 'zod';

// An empty variable (`LOG_RETENTION_HOURS=`) means "not set", not 0: z.coerce would turn ''
// into 0, which for the retention setting silently means "keep forever".
const wholeNumber = (defaultValue: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
    z.coerce.number().int().min(min).max(max).default(defaultValue),
  );

const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);

const workersEnvObject = baseEnvSchema.extend({
  /** How long change events are kept once every consumer group is past them; 0 keeps them forever. */
  LOG_RETENTION_HOURS: wholeNumber(168, 0),
  /** How often the retention job runs. */
  RETENTION_INTERVAL_MS: wholeNumber(3_600_000, 1_000),
  /**
   * How often the tables' planner statistics are checked, and those that changed by more than
   * PostgreSQL's own autoanalyze threshold analyzed (0: never; leave it to autovacuum).
   */
  TABLE_STATS_INTERVAL_MS: wholeNumber(10_000, 0),
  /** How often each provider connection's health is sampled into the history (sync_health_sample). */
  HEALTH_SAMPLE_INTERVAL_MS: wholeNumber(60_000, 1_000),
  /** How long health samples are kept; the API answers history up to this many hours. */
  HEALTH_HISTORY_RETENTION_HOURS: wholeNumber(72, 1, 8_760),
  /** Jobs one process runs at once per queue, unless the queue fixes its own. */
  WORKER_CONCURRENCY: wholeNumber(10, 1, 1_000),
  /** How often every live or backfilling connection is pulled (the fallback to push notifications). */
  PULL_INTERVAL_MS: wholeNumber(30_000, 200),
  /** Most connector pages one pull job reads before it hands over to a continuation job. */
  PULL_JOB_MAX_PAGES: wholeNumber(50, 1),
  /** Longest one pull job keeps reading before it hands over to a continuation job. */
  PULL_JOB_BUDGET_MS: wholeNumber(20_000, 100),
  /**
   * How often at most a record's activity insights are written to one CRM's properties (the
   * early trigger's period): a busy inbox does not spend the CRM's rate budget.
   */
  INSIGHT_WRITE_PERIOD_MS: wholeNumber(30_000, 0),
  /** How long outbox rows for one target record gather before they are pushed. */
  SYNC_COALESCE_MS: wholeNumber(50, 0),
  /**
   * Longest the pushes owed by a sync stage that is behind (a backlog on its partitions) are
   * held, so that the backlog sends each record's latest values rather than every value it
   * went through (PushHold); 0 never holds them.
   */
  SYNC_BACKLOG_HOLD_MS: wholeNumber(5_000, 0, 60_000),
  /**
   * Leased partitions the sync stage takes in one transaction (each in offset order): the
   * fixed cost of a batch is paid once for all of them instead of once per partition.
   */
  SYNC_PARTITIONS_PER_BATCH: wholeNumber(16, 1, 1_024),
  /**
   * Most events the sync stage takes in one transaction (a backlogged partition takes them all;
   * partitions sharing a transaction split them): a batch's fixed cost is paid once for all.
   */
  SYNC_BATCH_SIZE: wholeNumber(200, 1, 10_000),
  /**
   * Up to how many events a batch grows to while the stage is behind (batches come back full):
   * each record's changes in a batch share one save, so a backlog folds faster in larger
   * batches (BatchSizer in libs/log). SYNC_BATCH_SIZE never grows.
   */
  SYNC_BATCH_MAX: wholeNumber(5_000, 1, 50_000),
  /**
   * How long a grown batch aims to take, read to commit. The other partitions a member leases
   * wait for a batch: this bounds how long a backlog in one workspace delays the others.
   */
  SYNC_BATCH_TARGET_MS: wholeNumber(1_000, 10, 60_000),
  /** Whether this process runs a member of the `sync` consumer group (identity, merge, outbox). */
  SYNC_CONSUMER: z.preprocess(
    (v) =>
      typeof v === 'string'
        ? v.trim() === ''
          ? undefined
          : !['false', '0', 'no', 'off'].includes(v.trim().toLowerCase())
        : v,
    z.boolean().default(true),
  ),
  /** HubSpot requests per 10 s per portal that our budget allows (110: an OAuth app's limit). */
  HUBSPOT_REQUESTS_PER_10S: wholeNumber(110, 1),
  /** Port of the Prometheus `/metrics` endpoint; 0 turns it off. */
  METRICS_PORT: wholeNumber(9464, 0, 65_535),
  METRICS_HOST: z.preprocess(unsetIfEmpty, z.string().min(1).default('127.0.0.1')),
  ...providerEnvSchema.shape,
  // Optional here (unlike the API): the workers only need the keyring to open credentials,
  // so processes and tests that never touch a connection start without it. ConnectionRuntime
  // fails with a message naming the setting when a credential is needed and no key is set.
  SYNCLINE_ENCRYPTION_KEYS: z.preprocess(
    unsetIfEmpty,
    keyringEnvSchema.shape.SYNCLINE_ENCRYPTION_KEYS.optional(),
  ),
  SYNCLINE_ENCRYPTION_ACTIVE_KEY: z.preprocess(
    unsetIfEmpty,
    keyringEnvSchema.shape.SYNCLINE_ENCRYPTION_ACTIVE_KEY,
  ),
});

/** Every setting the workers read, parsed once at start. */
export const workersConfigSchema = workersEnvObject.superRefine((env, ctx) => {
  const active = env.SYNCLINE_ENCRYPTION_ACTIVE_KEY;
  if (active === undefined) return;
  if (env.SYNCLINE_ENCRYPTION_KEYS === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['SYNCLINE_ENCRYPTION_ACTIVE_KEY'],
      message: 'is set but SYNCLINE_ENCRYPTION_KEYS is not',
    });
    return;
  }
  try {
    Keyring.parse(env.SYNCLINE_ENCRYPTION_KEYS, active);
  } catch {
    ctx.addIssue({
      code: 'custom',
      path: ['SYNCLINE_ENCRYPTION_ACTIVE_KEY'],
      message: 'must name one of the keys in SYNCLINE_ENCRYPTION_KEYS',
    });
  }
});
export type WorkersConfig = Readonly<z.output<typeof workersConfigSchema>>;

/** Injection token for the parsed WorkersConfig. */
export const WORKERS_CONFIG = Symbol('WORKERS_CONFIG');

/** Throws a ConfigError naming every bad setting. */
export function loadWorkersConfig(env: NodeJS.ProcessEnv = process.env): WorkersConfig {
  return Object.freeze(parseEnv(workersConfigSchema, env));
}

/** The keyring the settings describe, or undefined when no key is configured. */
export function workersKeyring(config: WorkersConfig): Keyring | undefined {
  if (config.SYNCLINE_ENCRYPTION_KEYS === undefined) return undefined;
  return Keyring.parse(config.SYNCLINE_ENCRYPTION_KEYS, config.SYNCLINE_ENCRYPTION_ACTIVE_KEY);
}
