import type { ClientConfig } from 'pg';

/**
 * A connection's settings with generic plans for its named statements: a statement prepared
 * on it is planned once, not again at every execution. The hot statements of the log and its
 * consumers (an append, a batch's reads and writes, a push's claim) are named and shaped by
 * arrays of rows rather than by the values in them, so one plan serves every call; left to
 * choose, PostgreSQL planned several of them anew each time, 1 to 2 ms of its CPU for the
 * largest. Unnamed statements are planned per execution whatever this says.
 */
export function withGenericPlans<T extends ClientConfig>(config: T): T {
  return {
    ...config,
    options: [config.options, '-c plan_cache_mode=force_generic_plan'].filter(Boolean).join(' '),
  };
}
