/** The outcome of asking a limiter for one request. */
export interface LimitDecision {
  allowed: boolean;
  max: number;
  remaining: number;
  windowMs: number;
}

/**
 * A rolling window: a request is allowed while fewer than `max` were allowed in the last
 * `windowMs`. HubSpot's TEN_SECONDLY_ROLLING policy works this way (not fixed buckets),
 * so a client that spends the window recovers as the oldest requests age out. Refused
 * requests do not count.
 */
export class RollingWindowLimiter {
  /** Times of allowed requests, oldest first, from `head`. */
  private hits: number[] = [];
  private head = 0;

  constructor(
    public max: number,
    public windowMs: number,
  ) {}

  take(now: number): LimitDecision {
    this.prune(now);
    const used = this.hits.length - this.head;
    if (used >= this.max) return { allowed: false, max: this.max, remaining: 0, windowMs: this.windowMs };
    this.hits.push(now);
    return { allowed: true, max: this.max, remaining: this.max - used - 1, windowMs: this.windowMs };
  }

  /** Allowed requests still inside the window. */
  used(now: number): number {
    this.prune(now);
    return this.hits.length - this.head;
  }

  /** Allowed requests within the last `ms` (for the secondly headers). */
  countWithin(now: number, ms: number): number {
    let n = 0;
    for (let i = this.hits.length - 1; i >= this.head && (this.hits[i] as number) > now - ms; i--) n++;
    return n;
  }

  private prune(now: number): void {
    while (this.head < this.hits.length && (this.hits[this.head] as number) <= now - this.windowMs)
      this.head++;
    // Compact now and then so a long run does not keep every timestamp.
    if (this.head > 1024 && this.head * 2 > this.hits.length) {
      this.hits = this.hits.slice(this.head);
      this.head = 0;
    }
  }
}

export interface PortalLimits {
  /** Requests per rolling window (HubSpot: 100/190 private apps, 110 OAuth apps, per 10 s). */
  per10s: number;
  /** Search requests per second (HubSpot: 5). */
  searchPerSecond: number;
  /** The window length; 10 000 ms as in HubSpot, shorter in tests that wait for recovery. */
  windowMs: number;
  /** Optional daily cap (policy DAILY). */
  perDay?: number;
}

export const DEFAULT_LIMITS: PortalLimits = { per10s: 110, searchPerSecond: 5, windowMs: 10_000 };

export type LimitOutcome =
  | { allowed: true; headers: Record<string, string> }
  | {
      allowed: false;
      policy: 'TEN_SECONDLY_ROLLING' | 'DAILY' | 'SECONDLY';
      headers: Record<string, string>;
    };

/** The limits of one portal: the rolling window with HubSpot's headers, search apart. */
export class PortalRateLimiter {
  private window: RollingWindowLimiter;
  private search: RollingWindowLimiter;
  private daily: RollingWindowLimiter | undefined;

  constructor(private limits: PortalLimits) {
    this.window = new RollingWindowLimiter(limits.per10s, limits.windowMs);
    this.search = new RollingWindowLimiter(limits.searchPerSecond, 1000);
    this.daily =
      limits.perDay === undefined ? undefined : new RollingWindowLimiter(limits.perDay, 86_400_000);
  }

  get current(): PortalLimits {
    return { ...this.limits };
  }

  /** Changes the limits without forgetting the requests already counted. */
  configure(limits: PortalLimits): void {
    this.limits = limits;
    this.window.max = limits.per10s;
    this.window.windowMs = limits.windowMs;
    this.search.max = limits.searchPerSecond;
    if (limits.perDay === undefined) this.daily = undefined;
    else if (this.daily) this.daily.max = limits.perDay;
    else this.daily = new RollingWindowLimiter(limits.perDay, 86_400_000);
  }

  /** A CRM request: counted in the window; answers carry the rate-limit headers. */
  takeStandard(now: number): LimitOutcome {
    if (this.daily && this.daily.used(now) >= this.daily.max) {
      return { allowed: false, policy: 'DAILY', headers: this.headers(now, 0) };
    }
    const decision = this.window.take(now);
    if (!decision.allowed)
      return { allowed: false, policy: 'TEN_SECONDLY_ROLLING', headers: this.headers(now, 0) };
    this.daily?.take(now);
    return { allowed: true, headers: this.headers(now, decision.remaining) };
  }

  /** A search request: its own per-second limit, and no rate-limit headers, as in HubSpot. */
  takeSearch(now: number): LimitOutcome {
    const decision = this.search.take(now);
    return decision.allowed
      ? { allowed: true, headers: {} }
      : { allowed: false, policy: 'SECONDLY', headers: {} };
  }

  /** The headers of a request refused by an injected fault: the window looks spent. */
  exhaustedHeaders(now: number): Record<string, string> {
    return this.headers(now, 0);
  }

  private headers(now: number, remaining: number): Record<string, string> {
    const secondly = Math.max(1, Math.ceil((this.limits.per10s * 1000) / this.limits.windowMs));
    const usedThisSecond = this.window.countWithin(now, 1000);
    const headers: Record<string, string> = {
      'X-HubSpot-RateLimit-Interval-Milliseconds': String(this.limits.windowMs),
      'X-HubSpot-RateLimit-Max': String(this.limits.per10s),
      'X-HubSpot-RateLimit-Remaining': String(remaining),
      'X-HubSpot-RateLimit-Secondly': String(secondly),
      'X-HubSpot-RateLimit-Secondly-Remaining': String(Math.max(0, secondly - usedThisSecond)),
    };
    if (this.daily) {
      headers['X-HubSpot-RateLimit-Daily'] = String(this.daily.max);
      headers['X-HubSpot-RateLimit-Daily-Remaining'] = String(
        Math.max(0, this.daily.max - this.daily.used(now)),
      );
    }
    return headers;
  }
}
