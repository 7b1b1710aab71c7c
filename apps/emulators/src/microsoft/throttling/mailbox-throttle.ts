import { graphErrors } from '../graph-errors';

/** Outlook's limits per app per mailbox (L/graph/throttling-limits#outlook-service-limits). */
export interface ThrottleLimits {
  concurrent: number;
  perTenMinutes: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = { concurrent: 4, perTenMinutes: 10_000 };

const WINDOW_MS = 10 * 60_000;

/**
 * Counts Graph requests per (app, mailbox): those in flight, against the concurrency limit
 * (429 MailboxConcurrency), and those of the current ten-minute window, against the request
 * budget (429 ApplicationThrottled, Retry-After until the window ends). Refused requests
 * count against neither.
 */
export class MailboxThrottle {
  limits: ThrottleLimits = { ...DEFAULT_THROTTLE_LIMITS };
  private readonly inFlight = new Map<string, number>();
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number) {}

  /** Admits one request or throws Graph's 429; the caller calls `release` once it is answered. */
  admit(clientId: string, mailboxId: string): () => void {
    const key = `${clientId}:${mailboxId}`;
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now - window.start >= WINDOW_MS) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= this.limits.perTenMinutes)
      throw graphErrors.throttled(Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000)));
    const running = this.inFlight.get(key) ?? 0;
    if (running >= this.limits.concurrent) throw graphErrors.throttled(1, 'MailboxConcurrency');
    window.count++;
    this.inFlight.set(key, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** New limits apply from the next request; the windows already counted stay. */
  configure(limits: Partial<ThrottleLimits>): ThrottleLimits {
    this.limits = { ...this.limits, ...limits };
    return this.limits;
  }
}
