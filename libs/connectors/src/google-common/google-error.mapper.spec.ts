import { describe, expect, it } from 'vitest';
import { mapGoogleError, toGoogleFailure } from './google-error.mapper';

const gaxios = (status: number, domain: string, reason: string, headers: Record<string, string> = {}) =>
  Object.assign(new Error('Request failed'), {
    name: 'GaxiosError',
    response: {
      status,
      headers: new Headers(headers),
      data: { error: { errors: [{ domain, reason, message: reason }], code: status, message: reason } },
    },
  });

const code = (status: number, domain: string, reason: string) =>
  mapGoogleError(toGoogleFailure(gaxios(status, domain, reason))!).code;

describe('mapGoogleError', () => {
  it.each([
    [403, 'usageLimits', 'userRateLimitExceeded', 'RateLimited'],
    [403, 'usageLimits', 'rateLimitExceeded', 'RateLimited'],
    [429, 'usageLimits', 'rateLimitExceeded', 'RateLimited'],
    [401, 'global', 'authError', 'AuthRevoked'],
    [403, 'global', 'insufficientPermissions', 'AuthRevoked'],
    [403, 'calendar', 'forbiddenForNonOrganizer', 'Validation'],
    [410, 'calendar', 'fullSyncRequired', 'CursorInvalid'],
    [410, 'global', 'deleted', 'NotFound'],
    [404, 'global', 'notFound', 'NotFound'],
    [409, 'global', 'duplicate', 'Conflict'],
    [412, 'global', 'conditionNotMet', 'Conflict'],
    [400, 'global', 'invalid', 'Validation'],
    [500, 'global', 'backendError', 'Transient'],
    [503, 'global', 'backendError', 'Transient'],
  ])('%i %s/%s → %s', (status, domain, reason, expected) => {
    expect(code(status, domain, reason)).toBe(expected);
  });

  it('keeps the reason and reads Retry-After', () => {
    const failure = toGoogleFailure(gaxios(429, 'usageLimits', 'rateLimitExceeded', { 'retry-after': '3' }))!;
    expect(failure).toMatchObject({ status: 429, reason: 'rateLimitExceeded', retryAfterMs: 3000 });
    expect(mapGoogleError(failure)).toMatchObject({ code: 'RateLimited', retryAfterMs: 3000, status: 429 });
  });

  it('treats network failures as Transient and leaves other exceptions alone (bugs)', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(mapGoogleError(toGoogleFailure(reset)!).code).toBe('Transient');
    expect(toGoogleFailure(new TypeError('x is undefined'))).toBeUndefined();
  });
});
