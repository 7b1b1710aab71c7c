import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauth2Refresher } from '../shared/oauth-refresh';
import { MemoryCredentialStore, OAuthTokenSource } from '../shared/token-source';
import { graphCall } from './graph-call';
import { identifyMicrosoftAccount, microsoftAccountId, PERSONAL_ACCOUNTS_TENANT } from './microsoft-account';
import { CountingBudget, MicrosoftTestKit } from './testing/microsoft-test-kit';

let kit: MicrosoftTestKit;

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
});

afterAll(async () => {
  await kit.close();
});

const fast = { retry: { baseDelayMs: 10, maxDelayMs: 2_000 } };

describe('graphCall: one Graph request with our plumbing', () => {
  it('takes budget for every attempt and rides out a 429 and a 503 with their Retry-After', async () => {
    const user = await kit.createUser('retry');
    const budget = new CountingBudget();
    const ctx = kit.context(user, budget);
    await kit.fault({ kind: 'rate-limit', account: user.upn, count: 1 });
    await kit.fault({ kind: 'server-error', account: user.upn, count: 1 });
    const res = await graphCall(ctx, (client) => client.api('/me/events').get(), fast);
    expect(res.ok).toBe(true);
    const statuses = (await kit.requests(user)).map((r) => r.status);
    expect(statuses).toEqual([429, 503, 200]);
    expect(budget.acquired).toBe(3);
  });

  it('gives up with RateLimited and the advised wait once the retries are spent', async () => {
    const user = await kit.createUser('spent');
    await kit.fault({ kind: 'rate-limit', account: user.upn, count: 5 });
    const res = await graphCall(kit.context(user), (client) => client.api('/me/events').get(), {
      retry: { retries: 1, baseDelayMs: 10, maxDelayMs: 2_000 },
    });
    expect(res.ok ? 'ok' : res.error.code).toBe('RateLimited');
    expect(res.ok ? 0 : res.error.retryAfterMs).toBeGreaterThan(0);
  });

  it('refreshes once on a 401 and saves the refresh token Microsoft hands back', async () => {
    const user = await kit.createUser('refresh');
    const connectionId = 'c-refresh';
    const store = new MemoryCredentialStore({
      [connectionId]: {
        accessToken: 'an-access-token-Graph-never-issued',
        refreshToken: user.refreshToken,
        expiresAt: new Date(Date.now() + 3_000_000).toISOString(),
      },
    });
    const tokens = new OAuthTokenSource({
      connectionId,
      store,
      refresh: oauth2Refresher({ tokenUrl: kit.tokenUrl, ...kit.app }),
    });
    const res = await graphCall(kit.context(user, new CountingBudget(), tokens), (client) =>
      client.api('/me').get(),
    );
    expect(res.ok && (res.value as { id: string }).id).toBe(user.id);
    const saved = await store.load(connectionId);
    expect(saved.ok && saved.value.refreshToken).not.toBe(user.refreshToken);
  });

  it('is AuthRevoked when the grant is revoked, and when the grant lacks the area', async () => {
    const revoked = await kit.createUser('revoked');
    await kit.fault({ kind: 'revoke-token', account: revoked.upn, count: 1 });
    const res = await graphCall(kit.context(revoked), (client) => client.api('/me/events').get(), fast);
    expect(res.ok ? 'ok' : res.error.code).toBe('AuthRevoked');

    const narrow = await kit.createUser('narrow', { scopes: ['offline_access', 'User.Read', 'Mail.Read'] });
    const denied = await graphCall(kit.context(narrow), (client) => client.api('/me/events').get(), fast);
    expect(denied.ok ? 'ok' : denied.error).toMatchObject({ code: 'AuthRevoked', status: 403 });
  });

  it('is CursorInvalid, with Graph’s code, when a delta token has expired', async () => {
    const user = await kit.createUser('delta');
    const ctx = kit.context(user);
    const first = await graphCall(
      ctx,
      (client) =>
        client.api('/me/mailFolders/inbox/messages/delta').get() as Promise<{ '@odata.deltaLink': string }>,
    );
    if (!first.ok) throw new Error(first.error.message);
    await kit.fault({ kind: 'invalidate-cursors', account: user.upn, count: 1 });
    const again = await graphCall(ctx, (client) => client.api(first.value['@odata.deltaLink']).get(), fast);
    expect(again.ok ? 'ok' : again.error).toMatchObject({
      code: 'CursorInvalid',
      graphCode: 'syncStateNotFound',
    });
  });

  it('is NotFound for an item that is gone', async () => {
    const user = await kit.createUser('missing');
    const ctx = kit.context(user);
    const created = await graphCall(
      ctx,
      (client) =>
        client.api('/me/events').post({
          subject: 'Short-lived',
          start: { dateTime: '2026-12-07T09:00:00', timeZone: 'UTC' },
          end: { dateTime: '2026-12-07T09:30:00', timeZone: 'UTC' },
        }) as Promise<{ id: string }>,
    );
    if (!created.ok) throw new Error(created.error.message);
    await graphCall(ctx, (client) => client.api(`/me/events/${created.value.id}`).delete());
    const res = await graphCall(ctx, (client) => client.api(`/me/events/${created.value.id}`).get());
    expect(res.ok ? 'ok' : res.error.code).toBe('NotFound');
  });
});

describe('identifyMicrosoftAccount', () => {
  it('names the account by tenant and object id, as Graph reports them', async () => {
    const tenantId = '5b3c1f1e-8d0a-4f7e-9c61-0f2d7a1b9e44';
    const user = await kit.createUser('who', { tenantId });
    const res = await identifyMicrosoftAccount(
      { accessToken: user.accessToken },
      kit.context(user).endpoints,
    );
    expect(res.ok && res.value).toEqual({
      accountId: microsoftAccountId(tenantId, user.id),
      proof: 'microsoft_graph_me',
      address: user.upn,
    });
  });

  it('puts a personal account in the consumers’ tenant', async () => {
    const user = await kit.createUser('personal', { tenantId: PERSONAL_ACCOUNTS_TENANT });
    const res = await identifyMicrosoftAccount(
      { accessToken: user.accessToken },
      kit.context(user).endpoints,
    );
    expect(res.ok && res.value.accountId).toBe(`${PERSONAL_ACCOUNTS_TENANT}:${user.id}`);
  });

  it('refuses a revoked token, a token without User.Read, and credentials without an access token', async () => {
    const revoked = await kit.createUser('who-revoked');
    await kit.fault({ kind: 'revoke-token', account: revoked.upn, count: 1 });
    const endpoints = kit.context(revoked).endpoints;
    const a = await identifyMicrosoftAccount({ accessToken: revoked.accessToken }, endpoints);
    expect(a.ok ? 'ok' : a.error.code).toBe('AuthRevoked');

    const narrow = await kit.createUser('who-narrow', { scopes: ['offline_access', 'Calendars.Read'] });
    const b = await identifyMicrosoftAccount({ accessToken: narrow.accessToken }, endpoints);
    expect(b.ok ? 'ok' : b.error.code).toBe('Validation');

    const c = await identifyMicrosoftAccount({ privateAppToken: 'pat' }, endpoints);
    expect(c.ok ? 'ok' : c.error.code).toBe('Validation');
  });
});
