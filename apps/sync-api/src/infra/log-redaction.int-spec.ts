import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const secret = (): string => `s3cr3t${randomBytes(12).toString('hex')}`;

describe('secrets in query strings never reach a log line', () => {
  let t: TestApp;
  let adminKey: string;

  beforeAll(async () => {
    t = await startTestApp('log_redaction');
    ({ adminKey } = await seedWorkspace(t.prisma, 'Acme'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('redacts every parameter whose name holds key, token, secret, password, code or state, on every line', async () => {
    const secrets: string[] = [];
    const s = (): string => {
      const value = secret();
      secrets.push(value);
      return value;
    };
    const requests: { method: 'GET' | 'POST'; url: string; key?: boolean }[] = [
      // Refused (401): a key is never taken from the query string.
      { method: 'GET', url: `/api/v1/me?api_key=${s()}` },
      { method: 'GET', url: `/api/v1/me?limit=5&apiKey=${s()}` },
      { method: 'GET', url: `/api/v1/me?APIKEY=${s()}&x-api-key=${s()}#frag` },
      // Answered, with the key in the header and secrets beside it.
      {
        method: 'GET',
        url: `/api/v1/me?client_secret=${s()}&password=${s()}&refreshToken=${s()}&keep=visible`,
        key: true,
      },
      // An unknown route: its 404 message names the URL.
      { method: 'GET', url: `/nowhere?accessToken=${s()}&Token=${s()}` },
      // The OAuth callback's code and state, and names that only contain the words.
      {
        method: 'GET',
        url: `/api/v1/connections/oauth/hubspot/callback?code=${s()}&state=${s()}&auth_code=${s()}&oauthState=${s()}`,
      },
      // A push endpoint's token.
      { method: 'POST', url: `/webhooks/gmail?token=${s()}` },
      // Percent-encoded separators, as in a URL carried inside another.
      { method: 'GET', url: `/api/v1/me?next=%2Fcb%3Fsecret%3D${s()}` },
    ];
    for (const request of requests) {
      const res = await t.app.inject({
        method: request.method,
        url: request.url,
        ...(request.key ? { headers: bearer(adminKey) } : {}),
        ...(request.method === 'POST' ? { payload: {} } : {}),
      });
      expect(res.statusCode, request.url).toBeLessThan(500);
    }
    // Every request was logged, and the lines are still JSON.
    const lines = t.logs.map((line) => JSON.parse(line) as { req?: { url?: string } });
    for (const request of requests) {
      const path = request.url.split('?')[0];
      expect(
        lines.some((line) => line.req?.url?.startsWith(`${path}?`)),
        path,
      ).toBe(true);
    }
    const all = t.logs.join('');
    for (const value of secrets) expect(all).not.toContain(value);
    // Other parameters stay readable.
    expect(all).toContain('limit=5');
    expect(all).toContain('keep=visible');
    expect(all).toContain('api_key=[redacted]');
  });
});
