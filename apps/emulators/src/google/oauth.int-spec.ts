import { createHash, randomBytes } from 'node:crypto';
import type { Auth } from 'googleapis';
import { oauth2 } from 'googleapis/build/src/apis/oauth2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LoggedRequest } from '../common/request-log';
import { expectSchema } from './testing/expect-schema';
import { apiError, type CreatedUser, GoogleHarness } from './testing/google-harness';

let google: GoogleHarness;
let user: CreatedUser;

beforeAll(async () => {
  google = await GoogleHarness.start();
});

afterAll(async () => {
  await google.close();
});

beforeEach(async () => {
  await google.control('POST', '/_emulator/reset');
  user = await google.createUser('dana@example.com');
});

const requests = async () =>
  (await google.control<LoggedRequest[]>('GET', `/_emulator/requests?account=${user.email}`)).body.map(
    (r) => `${r.method} ${r.path.split('?')[0]} ${r.status}`,
  );

describe('access tokens', () => {
  it('refreshes an expired access token against /token when the API answers 401', async () => {
    const auth = google.oauthClient(user);
    const cal = google.calendar(auth);
    await cal.events.list({ calendarId: 'primary' });
    google.advanceClock(3601_000);

    const res = await cal.events.list({ calendarId: 'primary' });
    expectSchema('calendar', 'Events', res.data);
    expect(auth.credentials.access_token).not.toBe(user.accessToken);
    expect(await requests()).toEqual([
      'GET /calendar/v3/calendars/primary/events 200',
      'GET /calendar/v3/calendars/primary/events 401',
      'POST /token 200',
      'GET /calendar/v3/calendars/primary/events 200',
    ]);
  });

  it('refreshes ahead of time when the client knows the token has expired', async () => {
    const auth = google.oauthClient(user, { expiry_date: Date.now() - 1000 });
    const tokens = new Promise<{ expiry_date?: number | null; scope?: string }>((resolve) =>
      auth.on('tokens', resolve),
    );
    await google.tasks(auth).tasklists.list();
    const issued = await tokens;
    expect(issued.expiry_date).toBeGreaterThan(Date.now() + 3500_000);
    expect(issued.scope).toContain('https://www.googleapis.com/auth/calendar');
    expect(await requests()).toEqual(['POST /token 200', 'GET /tasks/v1/users/@me/lists 200']);
  });

  it('answers invalid_grant once the grant is revoked by fault, and 401 to its access tokens', async () => {
    const auth = google.oauthClient(user);
    const gmail = google.gmail(auth);
    await google.fault({ kind: 'revoke-token', account: user.email, count: 1 });
    const failed = await apiError(gmail.users.getProfile({ userId: 'me' }));
    expect(failed).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });
    expect(await requests()).toEqual(['GET /gmail/v1/users/me/profile 401', 'POST /token 400']);

    // The fault was used up but the grant stays revoked, as a user's revocation does.
    const direct = await fetch(`${google.url}/gmail/v1/users/me/profile`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(direct.status).toBe(401);
    expect(await direct.json()).toEqual({
      error: {
        errors: [
          {
            domain: 'global',
            reason: 'authError',
            message: 'Invalid Credentials',
            locationType: 'header',
            location: 'Authorization',
          },
        ],
        code: 401,
        message: 'Invalid Credentials',
      },
    });
    expect((await apiError(auth.refreshAccessToken())).data).toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes a grant through /revoke', async () => {
    const auth = google.oauthClient(user);
    await auth.revokeToken(user.refreshToken);
    expect((await apiError(auth.refreshAccessToken())).data).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('authorization code flow', () => {
  it('redirects with a code that exchanges for tokens and an id_token naming the user', async () => {
    const auth = google.oauthClient(user);
    const url = new URL(
      auth.generateAuthUrl({
        access_type: 'offline',
        scope: ['openid', 'email', 'https://www.googleapis.com/auth/calendar'],
        redirect_uri: 'http://127.0.0.1:9/callback',
        state: 'xyz',
        login_hint: 'ines@example.com',
      }),
    );
    expect(url.origin).toBe(google.url);
    const redirect = await fetch(url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const callback = new URL(redirect.headers.get('location')!);
    expect(callback.searchParams.get('state')).toBe('xyz');

    const { tokens } = await auth.getToken({
      code: callback.searchParams.get('code')!,
      redirect_uri: 'http://127.0.0.1:9/callback',
    });
    expect(tokens).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
    const ticket = await auth.verifyIdToken({ idToken: tokens.id_token!, audience: user.clientId });
    expect(ticket.getPayload()?.email).toBe('ines@example.com');

    auth.setCredentials(tokens);
    const profile = await google.gmail(auth).users.getProfile({ userId: 'me' });
    expect(profile.data.emailAddress).toBe('ines@example.com');
    const reused = await apiError(
      auth.getToken({
        code: callback.searchParams.get('code')!,
        redirect_uri: 'http://127.0.0.1:9/callback',
      }),
    );
    expect(reused).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });
  });

  it("binds a data connect's code to its PKCE verifier: a wrong or missing one is invalid_grant", async () => {
    const auth = google.oauthClient(user);
    const redirectUri = 'http://127.0.0.1:9/callback';
    // As the API's connect asks (login_hint, product scopes: no consent page), with an S256 challenge.
    const consentedCode = async (verifier: string): Promise<string> => {
      const url = auth.generateAuthUrl({
        access_type: 'offline',
        scope: ['openid', 'email', 'https://www.googleapis.com/auth/gmail.readonly'],
        redirect_uri: redirectUri,
        state: 'connect',
        login_hint: user.email,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        // The enum's value (importing the enum would load all of googleapis).
        code_challenge_method: 'S256' as Auth.CodeChallengeMethod.S256,
      });
      const redirect = await fetch(url, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      return new URL(redirect.headers.get('location')!).searchParams.get('code')!;
    };
    const verifier = randomBytes(32).toString('base64url');

    for (const codeVerifier of [undefined, randomBytes(32).toString('base64url')]) {
      const code = await consentedCode(verifier);
      const refused = await apiError(
        auth.getToken({ code, redirect_uri: redirectUri, ...(codeVerifier ? { codeVerifier } : {}) }),
      );
      expect(refused, String(codeVerifier)).toMatchObject({ status: 400, data: { error: 'invalid_grant' } });
    }
    const { tokens } = await auth.getToken({
      code: await consentedCode(verifier),
      redirect_uri: redirectUri,
      codeVerifier: verifier,
    });
    expect(tokens).toMatchObject({ refresh_token: expect.any(String), id_token: expect.any(String) });
  });
});

describe('rate limits and server errors', () => {
  it('answers Google-shaped 403, 429 and 500 bodies on fault, and per-user quotas for real', async () => {
    // An expiry date stops google-auth-library from treating a 403 as a reason to refresh.
    const cal = google.calendar(google.oauthClient(user, { expiry_date: Date.now() + 3600_000 }));
    const list = () => cal.events.list({ calendarId: 'primary' }, { retry: false });

    await google.fault({ kind: 'rate-limit', account: user.email, count: 1 });
    expect(await apiError(list())).toEqual({
      status: 403,
      data: {
        error: {
          errors: [
            { domain: 'usageLimits', reason: 'userRateLimitExceeded', message: 'Rate Limit Exceeded' },
          ],
          code: 403,
          message: 'Rate Limit Exceeded',
        },
      },
    });

    await google.control('PATCH', `/_emulator/google/users/${user.email}`, { rateLimitStatus: 429 });
    await google.fault({ kind: 'rate-limit', account: user.email, count: 1 });
    expect(await apiError(list())).toMatchObject({
      status: 429,
      data: { error: { code: 429, errors: [{ domain: 'usageLimits', reason: 'rateLimitExceeded' }] } },
    });

    await google.fault({ kind: 'server-error', account: user.email, count: 1 });
    expect(await apiError(list())).toMatchObject({
      status: 500,
      data: { error: { code: 500, errors: [{ reason: 'backendError' }] } },
    });

    await google.fault({ kind: 'latency', account: user.email, count: 1, ms: 150 });
    const started = Date.now();
    await list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    // Calls refused by a fault are not counted; the 500 and the slow call were.
    google.advanceClock(60_001);
    await google.control('PATCH', `/_emulator/google/users/${user.email}`, {
      limits: { calendarPerMinute: 2 },
    });
    await list();
    await list();
    expect((await apiError(list())).status).toBe(429);
    google.advanceClock(60_001);
    await list();
  });

  it('answers 401 without credentials and logs every data-plane call under the user', async () => {
    const anonymous = await fetch(`${google.url}/tasks/v1/users/@me/lists`);
    expect(anonymous.status).toBe(401);
    const other = await google.createUser('sam@example.com');
    await google.tasks(google.oauthClient(other)).tasklists.list();
    const logged = await google.control<LoggedRequest[]>('GET', '/_emulator/requests?service=google');
    expect(logged.body.map((r) => [r.path, r.status, r.account])).toEqual([
      ['/tasks/v1/users/@me/lists', 401, null],
      ['/tasks/v1/users/@me/lists', 200, 'sam@example.com'],
    ]);
  });
});

describe('userinfo', () => {
  it("names the user's address through googleapis' oauth2 v2 only to a token granted the email scope", async () => {
    const info = oauth2({ version: 'v2', auth: google.oauthClient(user), rootUrl: `${google.url}/` });
    const { data } = await info.userinfo.get();
    expect(data).toEqual({ id: expect.any(String), email: user.email, verified_email: true });
    const v3 = await fetch(`${google.url}/oauth2/v3/userinfo`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(await v3.json()).toEqual({ sub: data.id, email: user.email, email_verified: true });

    const calendarOnly = await google.createUser('cal-only@example.com', {
      scope: 'https://www.googleapis.com/auth/calendar',
    });
    const bare = oauth2({ version: 'v2', auth: google.oauthClient(calendarOnly), rootUrl: `${google.url}/` });
    expect((await bare.userinfo.get()).data).toEqual({ id: expect.any(String) });

    const unknown = oauth2({
      version: 'v2',
      auth: google.oauthClient({ ...user, accessToken: 'ya29.unknown', refreshToken: '' }),
      rootUrl: `${google.url}/`,
    });
    expect((await apiError(unknown.userinfo.get())).status).toBe(401);
  });
});

describe('control API', () => {
  it('keeps the OAuth client across resets and refuses bad users', async () => {
    const client = await google.control<{ clientId: string; clientSecret: string }>(
      'GET',
      '/_emulator/google/oauth-client',
    );
    expect(client.body).toEqual({ clientId: user.clientId, clientSecret: user.clientSecret });
    await google.control('POST', '/_emulator/reset');
    expect((await google.control('GET', '/_emulator/google/oauth-client')).body).toEqual(client.body);

    expect(
      (await google.control('POST', '/_emulator/google/users', { email: 'not-an-address' })).status,
    ).toBe(400);
    expect(await google.control('GET', '/_emulator/google/users/nobody@example.com/calendar/events')).toEqual(
      {
        status: 404,
        body: { error: 'no Google user nobody@example.com' },
      },
    );
    const again = await google.control<{ accessToken: string }>('POST', '/_emulator/google/users', {
      email: user.email,
    });
    expect(again.status).toBe(201);
    const existing = await google.control<{ accessToken: string }>('POST', '/_emulator/google/users', {
      email: user.email,
    });
    expect(existing.status).toBe(200);
    expect(existing.body.accessToken).not.toBe(again.body.accessToken);
  });
});
