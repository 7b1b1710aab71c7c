import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-to';
import { signInErrorMessage } from './sign-in-errors';

describe('safeReturnTo', () => {
  it.each([
    ['/people?q=ada', '/people?q=ada'],
    [
      '/deals/0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f?tab=history',
      '/deals/0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f?tab=history',
    ],
    ['https://evil.test/', '/'],
    ['//evil.test/x', '/'],
    ['/\\evil.test', '/'],
    ['/sign-in?returnTo=/people', '/'],
    ['/sign-in/link', '/'],
    [undefined, '/'],
  ])('%s → %s', (value, expected) => {
    expect(safeReturnTo(value)).toBe(expected);
  });
});

describe('signInErrorMessage', () => {
  it('words every code the callbacks send, a generic line for others, nothing without one', () => {
    for (const code of [
      'access_denied',
      'not_a_member',
      'email_unverified',
      'domain_not_allowed',
      'invalid_state',
      'invalid_token',
      'provider_unavailable',
      'oidc_disabled',
    ])
      expect(signInErrorMessage(code)).toMatch(/\w{3,}.*\./);
    expect(signInErrorMessage('something_new')).toBe('Sign-in did not complete. Please try again.');
    expect(signInErrorMessage(undefined)).toBeNull();
  });
});
