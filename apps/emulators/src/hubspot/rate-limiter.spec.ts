import { describe, expect, it } from 'vitest';
import { PortalRateLimiter, RollingWindowLimiter } from './rate-limiter';

describe('RollingWindowLimiter', () => {
  it('allows max requests per rolling window, and frees slots as the oldest age out', () => {
    const limiter = new RollingWindowLimiter(3, 10_000);
    expect([0, 1000, 2000].map((t) => limiter.take(t).remaining)).toEqual([2, 1, 0]);
    expect(limiter.take(9_999).allowed).toBe(false);
    // The first request (t=0) leaves the window at t=10 000; refused ones never counted.
    expect(limiter.take(10_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take(10_500).allowed).toBe(false);
    expect(limiter.take(11_000).allowed).toBe(true);
  });
});

describe('PortalRateLimiter', () => {
  it("answers with HubSpot's headers and the TEN_SECONDLY_ROLLING policy", () => {
    const limiter = new PortalRateLimiter({ per10s: 2, searchPerSecond: 5, windowMs: 10_000 });
    const first = limiter.takeStandard(0);
    expect(first).toEqual({
      allowed: true,
      headers: {
        'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
        'X-HubSpot-RateLimit-Max': '2',
        'X-HubSpot-RateLimit-Remaining': '1',
        'X-HubSpot-RateLimit-Secondly': '1',
        'X-HubSpot-RateLimit-Secondly-Remaining': '0',
      },
    });
    limiter.takeStandard(1);
    expect(limiter.takeStandard(2)).toMatchObject({ allowed: false, policy: 'TEN_SECONDLY_ROLLING' });
  });

  it('limits search apart, per second, without headers', () => {
    const limiter = new PortalRateLimiter({ per10s: 100, searchPerSecond: 5, windowMs: 10_000 });
    const answers = Array.from({ length: 6 }, (_, i) => limiter.takeSearch(i));
    expect(answers.slice(0, 5).every((a) => a.allowed && Object.keys(a.headers).length === 0)).toBe(true);
    expect(answers[5]).toEqual({ allowed: false, policy: 'SECONDLY', headers: {} });
    expect(limiter.takeSearch(1000).allowed).toBe(true);
    expect(limiter.takeStandard(1000).allowed).toBe(true);
  });

  it('applies a daily cap when one is set', () => {
    const limiter = new PortalRateLimiter({ per10s: 100, searchPerSecond: 5, windowMs: 10_000, perDay: 1 });
    expect(limiter.takeStandard(0).headers['X-HubSpot-RateLimit-Daily-Remaining']).toBe('0');
    expect(limiter.takeStandard(60_000)).toMatchObject({ allowed: false, policy: 'DAILY' });
  });
});
