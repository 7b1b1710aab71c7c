import { describe, expect, it } from 'vitest';
import { publicOrigin, sessionCookie } from './session-cookie';

describe('the session cookie', () => {
  it('is __Host- prefixed and Secure under an https PUBLIC_BASE_URL, plain over http', () => {
    expect(sessionCookie({ PUBLIC_BASE_URL: 'https://sync.example.com/app/' })).toEqual({
      name: '__Host-syncline_session',
      secure: true,
    });
    expect(sessionCookie({ PUBLIC_BASE_URL: 'http://127.0.0.1:3000' })).toEqual({
      name: 'syncline_session',
      secure: false,
    });
  });

  it('takes the origin a cookie write must come from, without path or trailing slash', () => {
    expect(publicOrigin({ PUBLIC_BASE_URL: 'https://sync.example.com/app/' })).toBe(
      'https://sync.example.com',
    );
    expect(publicOrigin({ PUBLIC_BASE_URL: 'http://127.0.0.1:3000/' })).toBe('http://127.0.0.1:3000');
  });
});
