import { err, ok } from '@syncline/core';
import type { ConnectorError, ConnectorResult, TokenSource } from '../contract/connector';

/**
 * A connection's sealed credentials, as the API stores them: OAuth tokens
 * (`{ accessToken, refreshToken, expiresAt }`) or a private-app token (`{ privateAppToken }`).
 */
export interface StoredCredentials {
  accessToken?: string;
  refreshToken?: string;
  /** ISO time the access token stops working. */
  expiresAt?: string;
  privateAppToken?: string;
  [extra: string]: unknown;
}

/** Where a connection's credentials live (Postgres in the apps, memory in tests). */
export interface CredentialStore {
  /** `AuthRevoked` when the connection has no credentials. */
  load(connectionId: string): Promise<ConnectorResult<StoredCredentials>>;
  save(connectionId: string, credentials: StoredCredentials): Promise<void>;
}

export interface RefreshedToken {
  accessToken: string;
  /** Absent when the provider keeps the refresh token (HubSpot, Google). */
  refreshToken?: string;
  expiresAt: Date;
}

/** A provider's refresh call; a refused refresh token must come back as `AuthRevoked`. */
export type RefreshFn = (refreshToken: string) => Promise<ConnectorResult<RefreshedToken>>;

export interface OAuthTokenSourceOptions {
  connectionId: string;
  store: CredentialStore;
  refresh: RefreshFn;
  /** Refresh this long before expiry. */
  skewMs?: number;
  now?: () => number;
}

/**
 * OAuth access tokens for one connection. Refreshes before expiry and after a 401, with one
 * refresh in flight however many callers ask; a refused refresh token is `AuthRevoked` and
 * stays so for this source (no refresh loop). Before refreshing it re-reads the store, so a
 * token another process refreshed is picked up instead of refreshed again.
 */
export class OAuthTokenSource implements TokenSource {
  private current: StoredCredentials | undefined;
  private inflight: Promise<ConnectorResult<string>> | undefined;
  private revoked: ConnectorError | undefined;
  private readonly skewMs: number;
  private readonly now: () => number;

  constructor(private readonly options: OAuthTokenSourceOptions) {
    this.skewMs = options.skewMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  async accessToken(): Promise<ConnectorResult<string>> {
    if (this.revoked) return err(this.revoked);
    if (!this.current) {
      const loaded = await this.options.store.load(this.options.connectionId);
      if (!loaded.ok) return loaded;
      this.current = loaded.value;
    }
    if (this.fresh(this.current)) return ok(this.current.accessToken!);
    return this.refreshOnce(undefined);
  }

  async invalidate(rejected: string): Promise<ConnectorResult<string>> {
    if (this.revoked) return err(this.revoked);
    // Another caller already replaced the rejected token.
    if (this.current?.accessToken && this.current.accessToken !== rejected && this.fresh(this.current))
      return ok(this.current.accessToken);
    return this.refreshOnce(rejected);
  }

  private fresh(c: StoredCredentials): c is StoredCredentials & { accessToken: string } {
    if (!c.accessToken) return false;
    const expiresAt = c.expiresAt ? Date.parse(c.expiresAt) : Number.NaN;
    return Number.isFinite(expiresAt) && expiresAt - this.skewMs > this.now();
  }

  private refreshOnce(rejected: string | undefined): Promise<ConnectorResult<string>> {
    this.inflight ??= this.refresh(rejected).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async refresh(rejected: string | undefined): Promise<ConnectorResult<string>> {
    const loaded = await this.options.store.load(this.options.connectionId);
    if (!loaded.ok) return this.fail(loaded.error);
    const stored = loaded.value;
    if (
      this.fresh(stored) &&
      stored.accessToken !== rejected &&
      stored.accessToken !== this.current?.accessToken
    ) {
      this.current = stored; // refreshed by another process meanwhile
      return ok(stored.accessToken);
    }
    if (!stored.refreshToken) return this.fail({ code: 'AuthRevoked', message: 'no refresh token stored' });
    const refreshed = await this.options.refresh(stored.refreshToken);
    if (!refreshed.ok) return refreshed.error.code === 'AuthRevoked' ? this.fail(refreshed.error) : refreshed;
    const next: StoredCredentials = {
      ...stored,
      accessToken: refreshed.value.accessToken,
      refreshToken: refreshed.value.refreshToken ?? stored.refreshToken,
      expiresAt: refreshed.value.expiresAt.toISOString(),
    };
    await this.options.store.save(this.options.connectionId, next);
    this.current = next;
    return ok(next.accessToken!);
  }

  private fail(error: ConnectorError): ConnectorResult<never> {
    if (error.code === 'AuthRevoked') this.revoked = error;
    return err(error);
  }
}

/** A token that never changes (HubSpot private app): a 401 means it was revoked. */
export class StaticTokenSource implements TokenSource {
  constructor(private readonly token: string) {}

  async accessToken(): Promise<ConnectorResult<string>> {
    return ok(this.token);
  }

  async invalidate(): Promise<ConnectorResult<string>> {
    return err({ code: 'AuthRevoked', message: 'the private app token was refused' });
  }
}

/** Credentials held in memory (tests, the emulator demo). */
export class MemoryCredentialStore implements CredentialStore {
  private readonly rows = new Map<string, StoredCredentials>();
  /** How many saves happened (tests check that concurrent refreshes collapse). */
  saves = 0;

  constructor(initial: Record<string, StoredCredentials> = {}) {
    for (const [id, c] of Object.entries(initial)) this.rows.set(id, { ...c });
  }

  async load(connectionId: string): Promise<ConnectorResult<StoredCredentials>> {
    const row = this.rows.get(connectionId);
    return row ? ok({ ...row }) : err({ code: 'AuthRevoked', message: `no credentials for ${connectionId}` });
  }

  async save(connectionId: string, credentials: StoredCredentials): Promise<void> {
    this.saves++;
    this.rows.set(connectionId, { ...credentials });
  }
}
