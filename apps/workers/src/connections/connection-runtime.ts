import { Inject, Injectable } from '@nestjs/common';
import {
  type BudgetLimits,
  type ConnectionContext,
  type Connector,
  type ConnectorResult,
  type Cursor,
  type FieldMappings,
  gmailBudgetLimits,
  googleBudgetLimits,
  hubspotBudgetLimits,
  microsoftBudgetLimits,
  OAuthTokenSource,
  oauth2Refresher,
  PgCredentialStore,
  RedisRateBudget,
  type RefreshFn,
  StaticTokenSource,
  type TokenSource,
} from '@syncline/connectors';
import {
  CONNECTION_STATUSES,
  type ConnectionStatus,
  err,
  type Keyring,
  type Logger,
  ok,
  PROVIDER_KEYS,
  type ProviderKey,
  providerEndpoints,
} from '@syncline/core';
import { CONNECTORS } from '@syncline/sync-stage';
import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { WORKERS_CONFIG, type WorkersConfig, workersKeyring } from '../config/workers-config';
import { PG_POOL, REDIS, ROOT_LOGGER } from '../infra/connections';

export { CONNECTION_STATUSES, type ConnectionStatus };

/**
 * The connection row's `cursors`: the backfill position while `backfilling`, the incremental
 * one once `live`. Other keys are kept as they are.
 */
export interface ConnectionCursors {
  readonly backfill?: Cursor;
  readonly live?: Cursor;
  readonly [other: string]: Cursor | undefined;
}

/** One connection as the workers act on it: the row's state as of `open`, plus a ready context. */
export interface ConnectionHandle {
  readonly id: string;
  readonly workspaceId: string;
  readonly provider: ProviderKey;
  readonly status: ConnectionStatus;
  readonly statusReason: string | null;
  readonly deletePolicy: string;
  readonly cursors: ConnectionCursors;
  /** false when the row has no sealed credentials (every call would be `AuthRevoked`). */
  readonly hasCredentials: boolean;
  /**
   * The provider named the account of its credentials as this connection's (the API proves new
   * credentials; `proveAccount` proves those stored before proofs). Unproven, it takes nothing in.
   */
  readonly accountProven: boolean;
  /** Its credentials are a HubSpot private app's token (identified by its account details, never refreshed). */
  readonly privateApp: boolean;
  readonly connector: Connector;
  readonly ctx: ConnectionContext;
}

/** Credentials are sealed on the row but this process has no key to open them. */
export class KeyringMissingError extends UnrecoverableError {
  readonly code = 'Validation';
  constructor(connectionId: string) {
    super(
      `connection ${connectionId} has sealed credentials but SYNCLINE_ENCRYPTION_KEYS is not set for the workers`,
    );
    this.name = 'KeyringMissingError';
  }
}

/** Per-connection request budgets; HubSpot's rate is a setting (a private app or a higher tier has more). */
const budgetsFor = (config: WorkersConfig): Readonly<Record<ProviderKey, BudgetLimits>> => ({
  hubspot: hubspotBudgetLimits({ per10s: config.HUBSPOT_REQUESTS_PER_10S }),
  'google-calendar': googleBudgetLimits(),
  gmail: gmailBudgetLimits(),
  'google-tasks': googleBudgetLimits(),
  'microsoft-calendar': microsoftBudgetLimits(),
  'microsoft-mail': microsoftBudgetLimits(),
  'microsoft-todo': microsoftBudgetLimits(),
});

const MICROSOFT_PROVIDERS: ReadonlySet<ProviderKey> = new Set([
  'microsoft-calendar',
  'microsoft-mail',
  'microsoft-todo',
]);

/**
 * Whose budget a connection's requests take: its own, except Microsoft's, where Graph counts
 * requests per app and mailbox, so the calendar, mail and To Do connections of one mailbox
 * (one account, `<tid>:<oid>`) share one.
 */
const budgetOwner = (row: { id: string; provider: string; external_account_id: string }): string =>
  MICROSOFT_PROVIDERS.has(row.provider as ProviderKey) ? `microsoft:${row.external_account_id}` : row.id;

interface ConnectionRow {
  id: string;
  workspace_id: string;
  provider: string;
  external_account_id: string;
  status: ConnectionStatus;
  status_reason: string | null;
  cursors: ConnectionCursors | null;
  delete_policy: string;
  field_mappings: FieldMappings | null;
  /** md5 of the sealed credentials: tells a replacement (by the API, or a refresh) apart. */
  credentials_fingerprint: string | null;
  account_proven: boolean;
}

/** What is kept per connection between jobs: the token source (so refreshes collapse) and the budget. */
interface Session {
  readonly fingerprint: string | null;
  readonly parts: Promise<SessionParts>;
}

interface SessionParts {
  tokens: TokenSource;
  budget: RedisRateBudget;
  hasCredentials: boolean;
  /** The token source hands out a HubSpot private app's token (identified by its account details). */
  privateApp: boolean;
}

/** A token source for a row without credentials: every call is `AuthRevoked`. */
const noCredentials = (connectionId: string): TokenSource => {
  const refused = async (): Promise<ConnectorResult<string>> =>
    err({ code: 'AuthRevoked', message: `connection ${connectionId} has no credentials` });
  return { accessToken: refused, invalidate: refused };
};

/**
 * Opens connections for the workers: reads the row, and builds (once per connection and
 * credentials) the connector context: an OAuth token source over the sealed credentials,
 * the connection's Redis rate budget, the provider endpoints and field mappings.
 *
 * The state in a handle (status, cursors) is the row as `open` read it; the token source
 * and budget are cached in-process and rebuilt when the sealed credentials change, so new
 * credentials from the API are seen without a restart. `forget` drops the cache entry.
 */
@Injectable()
export class ConnectionRuntime {
  private readonly logger: Logger;
  private readonly sessions = new Map<string, Session>();
  private readonly keyring: Keyring | undefined;
  private readonly endpoints: ReturnType<typeof providerEndpoints>;
  private store: PgCredentialStore | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(WORKERS_CONFIG) private readonly config: WorkersConfig,
    @Inject(ROOT_LOGGER) rootLogger: Logger,
  ) {
    this.logger = rootLogger.child({ scope: ConnectionRuntime.name });
    this.keyring = workersKeyring(config);
    this.endpoints = providerEndpoints(config);
  }

  connectorFor(provider: ProviderKey): Connector {
    return CONNECTORS[provider];
  }

  /** The keyring, or a KeyringMissingError naming the setting (`connectionId` is for the message). */
  requireKeyring(connectionId: string): Keyring {
    if (this.keyring === undefined) throw new KeyringMissingError(connectionId);
    return this.keyring;
  }

  /** The connection as it is now, or undefined when there is no such row. */
  async open(connectionId: string): Promise<ConnectionHandle | undefined> {
    const { rows } = await this.pool.query<ConnectionRow>(
      `SELECT id, workspace_id, provider::text AS provider, external_account_id, status::text AS status,
              status_reason, cursors, delete_policy, field_mappings,
              md5(credentials_ciphertext) AS credentials_fingerprint,
              credentials_verified_at IS NOT NULL AS account_proven
         FROM connection WHERE id = $1`,
      [connectionId],
    );
    const row = rows[0];
    if (row === undefined) {
      this.forget(connectionId);
      return undefined;
    }
    const provider = toProviderKey(row.provider);
    let session = this.sessions.get(connectionId);
    if (session === undefined || session.fingerprint !== row.credentials_fingerprint) {
      session = { fingerprint: row.credentials_fingerprint, parts: this.build(row, provider) };
      this.sessions.set(connectionId, session);
      // A failed build (Postgres away) must not stick.
      const built = session;
      built.parts.catch(() => {
        if (this.sessions.get(connectionId) === built) this.sessions.delete(connectionId);
      });
    }
    const { tokens, budget, hasCredentials, privateApp } = await session.parts;
    const fieldMappings = row.field_mappings ?? {};
    const ctx: ConnectionContext = {
      connectionId: row.id,
      workspaceId: row.workspace_id,
      externalAccountId: row.external_account_id,
      tokens,
      budget,
      endpoints: this.endpoints,
      ...(Object.keys(fieldMappings).length > 0 ? { fieldMappings } : {}),
      ...(this.config.HUBSPOT_APP_ID === undefined ? {} : { appId: this.config.HUBSPOT_APP_ID }),
    };
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      provider,
      status: row.status,
      statusReason: row.status_reason,
      deletePolicy: row.delete_policy,
      cursors: row.cursors ?? {},
      hasCredentials,
      accountProven: row.account_proven,
      privateApp,
      connector: this.connectorFor(provider),
      ctx,
    };
  }

  /**
   * Proves a connection stored before accounts were proven: asks the provider whose account its
   * credentials open (a fresh access token, refreshed once should the provider refuse it) and,
   * when it is this connection's, marks the row proven. `mismatch` names the account they open
   * instead; the caller stops the connection. Errors are the connector's (`AuthRevoked`, …).
   */
  async proveAccount(
    handle: ConnectionHandle,
  ): Promise<ConnectorResult<{ proven: true } | { proven: false; accountId: string }>> {
    const { privateApp } = handle;
    const identify = (token: string) =>
      handle.connector.identifyAccount(
        privateApp ? { privateAppToken: token } : { accessToken: token },
        this.endpoints,
      );
    const token = await handle.ctx.tokens.accessToken();
    if (!token.ok) return token;
    let identified = await identify(token.value);
    if (!identified.ok && identified.error.code === 'AuthRevoked' && !privateApp) {
      const next = await handle.ctx.tokens.invalidate(token.value);
      if (!next.ok) return next;
      identified = await identify(next.value);
    }
    if (!identified.ok) return identified;
    const { accountId, proof, address } = identified.value;
    const claimed = handle.ctx.externalAccountId;
    const same = handle.provider === 'hubspot' ? accountId === claimed : accountId === claimed.toLowerCase();
    if (!same) return ok({ proven: false, accountId });
    // Not over credentials the API replaced (it proves its own) or erased meanwhile.
    await this.pool.query(
      `UPDATE connection SET credentials_verified_at = now(), credentials_proof = $2,
              account_address = coalesce($3, account_address)
        WHERE id = $1 AND credentials_verified_at IS NULL AND credentials_ciphertext IS NOT NULL`,
      [handle.id, proof, address ?? null],
    );
    return ok({ proven: true });
  }

  /** Drops the cached token source and budget; the next `open` reads the credentials again. */
  forget(connectionId: string): void {
    this.sessions.delete(connectionId);
  }

  /**
   * Sets the status and its reason (`undefined` clears the reason, like `null`). Marking
   * `needs_reauth` also forgets the cached credentials.
   */
  async setStatus(connectionId: string, status: ConnectionStatus, reason?: string | null): Promise<void> {
    await this.pool.query(
      `UPDATE connection SET status = $2::connection_status, status_reason = $3, updated_at = now() WHERE id = $1`,
      [connectionId, status, reason ?? null],
    );
    if (status === 'needs_reauth') this.forget(connectionId);
  }

  /** A call to the provider succeeded: last_success_at now, the last error cleared. */
  async recordSuccess(connectionId: string): Promise<void> {
    await this.pool.query(
      'UPDATE connection SET last_success_at = now(), last_error_code = NULL WHERE id = $1',
      [connectionId],
    );
  }

  /** A call to the provider failed with this code. */
  async recordError(connectionId: string, code: string): Promise<void> {
    await this.pool.query('UPDATE connection SET last_error_code = $2 WHERE id = $1', [connectionId, code]);
  }

  private async build(row: ConnectionRow, provider: ProviderKey): Promise<SessionParts> {
    const budget = new RedisRateBudget(
      this.redis,
      budgetOwner(row),
      budgetsFor(this.config)[provider],
      `${this.config.REDIS_PREFIX}:budget`,
    );
    const none = { tokens: noCredentials(row.id), budget, hasCredentials: false, privateApp: false };
    if (row.credentials_fingerprint === null) return none;
    const store = this.credentialStore(row.id);
    const loaded = await store.load(row.id);
    if (!loaded.ok) return none;
    const credentials = loaded.value;
    const privateApp = typeof credentials.privateAppToken === 'string';
    let tokens: TokenSource;
    if (typeof credentials.privateAppToken === 'string') {
      tokens = new StaticTokenSource(credentials.privateAppToken);
    } else if (typeof credentials.accessToken === 'string' && typeof credentials.refreshToken !== 'string') {
      // A bare access token (the demo, a test): used until it is refused.
      tokens = new StaticTokenSource(credentials.accessToken);
    } else {
      tokens = new OAuthTokenSource({ connectionId: row.id, store, refresh: this.refresher(provider) });
    }
    this.logger.debug({ connectionId: row.id, provider }, 'connection credentials opened');
    return { tokens, budget, hasCredentials: true, privateApp };
  }

  private credentialStore(connectionId: string): PgCredentialStore {
    this.store ??= new PgCredentialStore(this.pool, this.requireKeyring(connectionId));
    return this.store;
  }

  private refresher(provider: ProviderKey): RefreshFn {
    const client = this.oauthClient(provider);
    const { clientId, clientSecret, tokenUrl, prefix } = client;
    if (clientId === undefined || clientSecret === undefined) {
      // Not AuthRevoked: the user's grant may be fine; the operator has to set the client.
      return async () =>
        err({
          code: 'Validation',
          message: `cannot refresh a ${provider} token: ${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET are not set`,
        });
    }
    return oauth2Refresher({ tokenUrl, clientId, clientSecret });
  }

  /** The OAuth client a provider's tokens are refreshed with, and the settings that name it. */
  private oauthClient(provider: ProviderKey): {
    clientId: string | undefined;
    clientSecret: string | undefined;
    tokenUrl: string;
    prefix: 'HUBSPOT' | 'GOOGLE' | 'MICROSOFT';
  } {
    const c = this.config;
    if (provider === 'hubspot')
      return {
        clientId: c.HUBSPOT_CLIENT_ID,
        clientSecret: c.HUBSPOT_CLIENT_SECRET,
        tokenUrl: this.endpoints.hubspotTokenUrl,
        prefix: 'HUBSPOT',
      };
    if (MICROSOFT_PROVIDERS.has(provider))
      return {
        clientId: c.MICROSOFT_CLIENT_ID,
        clientSecret: c.MICROSOFT_CLIENT_SECRET,
        tokenUrl: this.endpoints.microsoftTokenUrl,
        prefix: 'MICROSOFT',
      };
    return {
      clientId: c.GOOGLE_CLIENT_ID,
      clientSecret: c.GOOGLE_CLIENT_SECRET,
      tokenUrl: this.endpoints.googleTokenUrl,
      prefix: 'GOOGLE',
    };
  }
}

function toProviderKey(value: string): ProviderKey {
  const key = PROVIDER_KEYS.find((k) => k === value);
  if (key === undefined) throw new Error(`connection has unknown provider ${value}`);
  return key;
}
