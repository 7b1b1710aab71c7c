import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateBudget } from '../contract/connector';

/** Points per fixed slot of `durationSec` seconds (rate-limiter-flexible counts in whole seconds). */
export interface BudgetWindow {
  points: number;
  durationSec: number;
}

export interface BudgetLimits {
  default: BudgetWindow;
  /** A separate allowance for search-like calls (HubSpot search); absent = counted as default. */
  search?: BudgetWindow;
}

/**
 * HubSpot's limits as fixed one-second slots under its rolling windows. A rolling 10 s
 * window overlaps 11 one-second slots, so slots of per10s/10 could in the worst phase let
 * 10 % too many through; a 5 % margin (`safety`) absorbs the realistic case (sequential
 * calls land at the same phase of each slot) at 5 % of throughput. Search has a rolling
 * 1 s window that overlaps two slots, so a slot gets half of it.
 */
export function hubspotBudgetLimits(
  limits: { per10s?: number; searchPerSecond?: number; safety?: number } = {},
): BudgetLimits {
  const per10s = limits.per10s ?? 110;
  const safety = limits.safety ?? 0.95;
  return {
    default: { points: Math.max(1, Math.floor((per10s * safety) / 10)), durationSec: 1 },
    search: { points: Math.max(1, Math.floor((limits.searchPerSecond ?? 5) / 2)), durationSec: 1 },
  };
}

/** Google's per-user quota (requests per minute by default), as one-second slots. */
export function googleBudgetLimits(
  limits: { perUserPerMinute?: number; safety?: number } = {},
): BudgetLimits {
  const perMinute = limits.perUserPerMinute ?? 600;
  const safety = limits.safety ?? 0.9;
  return { default: { points: Math.max(1, Math.floor((perMinute * safety) / 60)), durationSec: 1 } };
}

/**
 * Gmail's per-user quota, in quota units per rolling second (250 by default; the connector
 * charges each call its units). A rolling one-second window overlaps two fixed one-second
 * slots, so a slot gets half of it.
 */
export function gmailBudgetLimits(limits: { unitsPerSecond?: number } = {}): BudgetLimits {
  return { default: { points: Math.max(1, Math.floor((limits.unitsPerSecond ?? 250) / 2)), durationSec: 1 } };
}

/**
 * Outlook's limit per app and mailbox: 10,000 requests in ten minutes. Graph counts it over
 * the whole mailbox, so the three Microsoft connections of one mailbox share one budget (the
 * workers key it on the account, not the connection). Spread as one-second slots, a slot gets
 * a 600th (16, 9,600 in ten minutes: 4 % under the limit, so a window that starts out of step
 * with Graph's never goes over). The other limit, 4 requests in flight, is the connectors':
 * each works one request at a time per connection.
 */
export function microsoftBudgetLimits(limits: { perTenMinutes?: number } = {}): BudgetLimits {
  const perTenMinutes = limits.perTenMinutes ?? 10_000;
  return { default: { points: Math.max(1, Math.floor(perTenMinutes / 600)), durationSec: 1 } };
}

/**
 * A per-connection request budget in Redis, shared by every process that calls the same
 * connection: `acquire` waits until the request fits rather than failing.
 */
export class RedisRateBudget implements RateBudget {
  private readonly limiters: { default: RateLimiterRedis; search?: RateLimiterRedis };

  constructor(
    redis: Redis,
    private readonly connectionId: string,
    limits: BudgetLimits,
    /** Key prefix, e.g. `syncline:budget` (tests: `syncline-test:<run>:budget`). */
    keyPrefix: string,
  ) {
    const make = (kind: string, w: BudgetWindow) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${keyPrefix}:${kind}`,
        points: w.points,
        duration: w.durationSec,
      });
    this.limiters = {
      default: make('default', limits.default),
      ...(limits.search ? { search: make('search', limits.search) } : {}),
    };
  }

  async acquire(kind: 'default' | 'search' = 'default', cost = 1): Promise<void> {
    const limiter = (kind === 'search' ? this.limiters.search : undefined) ?? this.limiters.default;
    for (;;) {
      try {
        await limiter.consume(this.connectionId, cost);
        return;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection; // Redis down: a bug to surface
        // Over budget this slot: wait for the next one (a little jitter so waiters spread).
        await sleep(rejection.msBeforeNext + Math.floor(Math.random() * 5));
      }
    }
  }
}

/** A budget that never waits: benches measuring local cost, and unit tests. */
export const unlimitedBudget: RateBudget = { acquire: async () => {} };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
