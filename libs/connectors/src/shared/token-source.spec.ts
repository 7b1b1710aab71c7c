import { err, ok } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { MemoryCredentialStore, OAuthTokenSource, type RefreshFn, StaticTokenSource } from './token-source';

const T0 = Date.parse('2026-11-29T22:00:00.000Z');

function setup(expiresInMs: number, refresh: RefreshFn) {
  const store = new MemoryCredentialStore({
    c1: { accessToken: 'a-0', refreshToken: 'r-1', expiresAt: new Date(T0 + expiresInMs).toISOString() },
  });
  const source = new OAuthTokenSource({ connectionId: 'c1', store, refresh, now: () => T0 });
  return { store, source };
}

describe('OAuthTokenSource', () => {
  it('uses the stored token while it is fresh and refreshes inside the skew', async () => {
    let calls = 0;
    const refresh: RefreshFn = async () =>
      ok({ accessToken: `a-${++calls}`, expiresAt: new Date(T0 + 1_800_000) });
    expect(await setup(10 * 60_000, refresh).source.accessToken()).toEqual(ok('a-0'));
    expect(calls).toBe(0);
    const { source, store } = setup(30_000, refresh);
    expect(await source.accessToken()).toEqual(ok('a-1'));
    const saved = await store.load('c1');
    expect(saved.ok && saved.value).toMatchObject({ accessToken: 'a-1', refreshToken: 'r-1' });
  });

  it('collapses concurrent refreshes into one', async () => {
    let calls = 0;
    const refresh: RefreshFn = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      return ok({ accessToken: 'a-new', expiresAt: new Date(T0 + 1_800_000) });
    };
    const { source, store } = setup(10 * 60_000, refresh);
    await source.accessToken();
    const results = await Promise.all(Array.from({ length: 10 }, () => source.invalidate('a-0')));
    expect(results.every((r) => r.ok && r.value === 'a-new')).toBe(true);
    expect(calls).toBe(1);
    expect(store.saves).toBe(1);
    // A late caller still holding the old token gets the new one without another refresh.
    expect(await source.invalidate('a-0')).toEqual(ok('a-new'));
    expect(calls).toBe(1);
  });

  it('turns a refused refresh into AuthRevoked, once, with no loop', async () => {
    let calls = 0;
    const refresh: RefreshFn = async () => {
      calls++;
      return err({ code: 'AuthRevoked', message: 'BAD_REFRESH_TOKEN', status: 400 });
    };
    const { source } = setup(0, refresh);
    const first = await source.accessToken();
    expect(first.ok ? 'ok' : first.error.code).toBe('AuthRevoked');
    const second = await source.invalidate('a-0');
    expect(second.ok ? 'ok' : second.error.code).toBe('AuthRevoked');
    expect(calls).toBe(1);
  });

  it('passes a transient refresh failure through and tries again next time', async () => {
    let calls = 0;
    const refresh: RefreshFn = async () =>
      ++calls === 1
        ? err({ code: 'Transient', message: 'timeout' })
        : ok({ accessToken: 'a-2', expiresAt: new Date(T0 + 1_800_000) });
    const { source } = setup(0, refresh);
    const first = await source.accessToken();
    expect(first.ok ? 'ok' : first.error.code).toBe('Transient');
    expect(await source.accessToken()).toEqual(ok('a-2'));
  });

  it('a static private-app token is never refreshed; a 401 means revoked', async () => {
    const source = new StaticTokenSource('pat-1');
    expect(await source.accessToken()).toEqual(ok('pat-1'));
    const r = await source.invalidate();
    expect(r.ok ? 'ok' : r.error.code).toBe('AuthRevoked');
  });
});
