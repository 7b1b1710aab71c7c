import { randomBytes } from 'node:crypto';
import { Keyring } from '@syncline/core';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { seedConnection } from '../../../../test/support/fixtures';
import { oauth2Refresher } from './oauth-refresh';
import { credentialsAad, PgCredentialStore } from './pg-credential-store';
import { OAuthTokenSource } from './token-source';

describe('OAuthTokenSource over Postgres, refreshing against the HubSpot and Google emulators', () => {
  let db: TestDatabase;
  let pool: Pool;
  let emulators: RunningEmulators;
  const keyring = new Keyring({ k1: randomBytes(32) }, 'k1');

  beforeAll(async () => {
    db = await createTestDatabase('connectors_oauth');
    pool = new Pool({ connectionString: db.url, max: 4 });
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  });
  afterAll(async () => {
    await emulators.close();
    await pool.end();
    await db.drop();
  });

  async function portal(portalId: number) {
    const res = await fetch(`${emulators.hubspotUrl}/_emulator/hubspot/portals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ portalId, appId: 5001, clientSecret: 'shh' }),
    });
    return (await res.json()) as { accessToken: string; refreshToken: string; clientId: string };
  }

  it('seals credentials like the API, refreshes an expiring token once, saves it, and reports revocation', async () => {
    const grant = await portal(4242);
    const { connectionId } = await seedConnection(pool, 'oauth');
    const store = new PgCredentialStore(pool, keyring);
    await store.save(connectionId, {
      accessToken: 'stale',
      refreshToken: grant.refreshToken,
      expiresAt: new Date(Date.now() + 10_000).toISOString(), // inside the 60 s skew
    });
    // Same convention as apps/sync-api: opened with the row's associated data.
    const { rows } = await pool.query(
      'SELECT credentials_ciphertext, credentials_key_id FROM connection WHERE id = $1',
      [connectionId],
    );
    const plain = keyring.open(
      { keyId: rows[0].credentials_key_id, ciphertext: rows[0].credentials_ciphertext },
      credentialsAad(connectionId),
    );
    expect(JSON.parse(plain)).toMatchObject({ accessToken: 'stale' });

    const refresh = oauth2Refresher({
      tokenUrl: `${emulators.hubspotUrl}/oauth/v1/token`,
      clientId: grant.clientId,
      clientSecret: 'shh',
    });
    const source = new OAuthTokenSource({ connectionId, store, refresh });
    const tokens = await Promise.all([source.accessToken(), source.accessToken(), source.accessToken()]);
    const fresh = tokens[0]!.ok ? tokens[0]!.value : '';
    expect(fresh).not.toBe('stale');
    expect(tokens.every((t) => t.ok && t.value === fresh)).toBe(true);
    const saved = await store.load(connectionId);
    expect(saved.ok && saved.value.accessToken).toBe(fresh);
    const refreshes = (await (
      await fetch(`${emulators.hubspotUrl}/_emulator/requests?service=hubspot`)
    ).json()) as {
      path: string;
    }[];
    expect(refreshes.filter((r) => r.path.startsWith('/oauth/v1/token'))).toHaveLength(1);

    // A second process reads the saved token instead of refreshing again.
    const other = new OAuthTokenSource({ connectionId, store, refresh });
    expect(await other.accessToken()).toEqual({ ok: true, value: fresh });

    await fetch(`${emulators.hubspotUrl}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'hubspot', kind: 'revoke-token', account: 4242, count: 1 }),
    });
    const revoked = await source.invalidate(fresh);
    expect(revoked.ok ? 'ok' : revoked.error.code).toBe('AuthRevoked');
    const again = await source.accessToken();
    expect(again.ok ? 'ok' : again.error.code).toBe('AuthRevoked');
  });

  it("refreshes against Google's token endpoint with the same refresher: invalid_client and invalid_grant are AuthRevoked", async () => {
    const google = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${emulators.googleUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
      expect(res.status).toBeLessThan(400);
      return (await res.json().catch(() => ({}))) as Record<string, string>;
    };
    const user = await google('POST', '/_emulator/google/users', {
      email: `refresh-${Date.now()}@example.com`,
    });
    const client = { tokenUrl: `${emulators.googleUrl}/token`, clientId: user.clientId! };
    const refreshed = await oauth2Refresher({ ...client, clientSecret: user.clientSecret! })(
      user.refreshToken!,
    );
    expect(refreshed.ok && refreshed.value.accessToken).toEqual(expect.any(String));
    expect(refreshed.ok && refreshed.value.expiresAt.getTime()).toBeGreaterThan(Date.now());

    const wrongClient = await oauth2Refresher({ ...client, clientSecret: 'wrong' })(user.refreshToken!);
    expect(wrongClient).toMatchObject({ ok: false, error: { code: 'AuthRevoked', status: 401 } });

    await google('POST', '/_emulator/faults', {
      service: 'google',
      kind: 'revoke-token',
      account: user.email,
      count: 1,
    });
    const revoked = await oauth2Refresher({ ...client, clientSecret: user.clientSecret! })(
      user.refreshToken!,
    );
    expect(revoked).toMatchObject({ ok: false, error: { code: 'AuthRevoked', status: 400 } });

    // Nothing listening: retryable, not a revocation.
    const down = await oauth2Refresher({
      tokenUrl: 'http://127.0.0.1:9/token',
      clientId: 'c',
      clientSecret: 's',
      timeoutMs: 2_000,
    })('r');
    expect(down.ok ? 'ok' : down.error.code).toBe('Transient');
  });

  it('answers AuthRevoked for a connection without credentials', async () => {
    const { connectionId } = await seedConnection(pool, 'none');
    const loaded = await new PgCredentialStore(pool, keyring).load(connectionId);
    expect(loaded.ok ? 'ok' : loaded.error.code).toBe('AuthRevoked');
  });
});
