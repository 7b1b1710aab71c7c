import { describe, expect, it } from 'vitest';
import { connectorErrorFromHttp, retryAfterMs } from './http-errors';

describe('connectorErrorFromHttp', () => {
  it('maps statuses onto the closed set', () => {
    const code = (status?: number) => connectorErrorFromHttp({ status, message: 'x' }).code;
    expect([undefined, 500, 503, 408].map(code)).toEqual([
      'Transient',
      'Transient',
      'Transient',
      'Transient',
    ]);
    expect([401, 403, 404, 409, 410, 412, 400, 422].map(code)).toEqual([
      'AuthRevoked',
      'AuthRevoked',
      'NotFound',
      'Conflict',
      'CursorInvalid',
      'Conflict',
      'Validation',
      'Validation',
    ]);
  });

  it('carries the wait of a 429', () => {
    expect(
      connectorErrorFromHttp({ status: 429, message: 'x', headers: { 'Retry-After': '3' } }),
    ).toMatchObject({
      code: 'RateLimited',
      retryAfterMs: 3_000,
    });
    const now = Date.parse('2026-11-29T22:00:00Z');
    expect(retryAfterMs({ 'retry-after': 'Sun, 29 Nov 2026 22:00:05 GMT' }, now)).toBe(5_000);
    expect(retryAfterMs({ 'X-HubSpot-RateLimit-Interval-Milliseconds': '10000' })).toBe(10_000);
    expect(retryAfterMs({})).toBe(1_000);
  });
});
