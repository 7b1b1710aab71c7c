import { randomUUID } from 'node:crypto';
import { err, ok } from '@syncline/core';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import type { ConnectionContext, ConnectorResult, RateBudget, TokenSource } from '../../contract/connector';
import { oauth2Refresher } from '../../shared/oauth-refresh';

/**
 * Test plumbing for the Google connectors: the emulators on free ports, one emulator user
 * per test, and a connection context whose token source refreshes against the emulator's
 * real OAuth endpoint (through the shared `oauth2Refresher`).
 */

export interface GoogleUser {
  email: string;
  accessToken: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
}

export interface LoggedGoogleRequest {
  at: string;
  method: string;
  path: string;
  status: number;
  account: string | null;
}

/** Refreshes through the real token endpoint; concurrent refreshes share one call. */
export class RefreshingTokenSource implements TokenSource {
  private current: string | undefined;
  private refreshing: Promise<ConnectorResult<string>> | undefined;
  refreshes = 0;

  constructor(
    private readonly tokenUrl: string,
    private readonly user: GoogleUser,
    initial?: string,
  ) {
    this.current = initial;
  }

  async accessToken(): Promise<ConnectorResult<string>> {
    if (this.current) return ok(this.current);
    return this.refresh();
  }

  async invalidate(rejected: string): Promise<ConnectorResult<string>> {
    if (this.current && this.current !== rejected) return ok(this.current);
    this.current = undefined;
    return this.refresh();
  }

  private refresh(): Promise<ConnectorResult<string>> {
    this.refreshing ??= (async () => {
      this.refreshes++;
      const refresh = oauth2Refresher({
        tokenUrl: this.tokenUrl,
        clientId: this.user.clientId,
        clientSecret: this.user.clientSecret,
      });
      const res = await refresh(this.user.refreshToken);
      this.refreshing = undefined;
      if (!res.ok) return err(res.error);
      this.current = res.value.accessToken;
      return ok(res.value.accessToken);
    })();
    return this.refreshing;
  }
}

/** Never waits; counts what was asked, so tests can see every request took budget. */
export class CountingBudget implements RateBudget {
  acquired = 0;
  async acquire(_kind?: 'default' | 'search', cost = 1): Promise<void> {
    this.acquired += cost;
  }
}

export class GoogleTestKit {
  private constructor(readonly emulators: RunningEmulators) {}

  static async start(): Promise<GoogleTestKit> {
    return new GoogleTestKit(await startEmulators({ hubspotPort: 0, googlePort: 0 }));
  }

  get url(): string {
    return this.emulators.googleUrl;
  }

  async control<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** A fresh user with a unique address (tests never see each other's records). */
  async createUser(label: string, extra: Record<string, unknown> = {}): Promise<GoogleUser> {
    const email = `${label}-${randomUUID().slice(0, 8)}@example.com`;
    return (await this.control<GoogleUser>('POST', '/_emulator/google/users', { email, ...extra })).body;
  }

  /** A connection context for `user`; each call is a "new process" (fresh token cache). */
  context(
    user: GoogleUser,
    budget: RateBudget = new CountingBudget(),
    tokens?: TokenSource,
  ): ConnectionContext {
    return {
      connectionId: randomUUID(),
      workspaceId: randomUUID(),
      externalAccountId: user.email,
      tokens: tokens ?? new RefreshingTokenSource(`${this.url}/token`, user, user.accessToken),
      budget,
      endpoints: {
        hubspotBaseUrl: this.emulators.hubspotUrl,
        googleRootUrl: `${this.url}/`,
        googleTokenUrl: `${this.url}/token`,
        microsoftGraphUrl: this.emulators.microsoftUrl,
      },
    };
  }

  async fault(spec: { kind: string; account?: string; count?: number; ms?: number }): Promise<void> {
    await this.control('POST', '/_emulator/faults', { service: 'google', ...spec });
  }

  async requests(account: string): Promise<LoggedGoogleRequest[]> {
    return (
      await this.control<LoggedGoogleRequest[]>(
        'GET',
        `/_emulator/requests?service=google&account=${encodeURIComponent(account)}`,
      )
    ).body;
  }

  /** Acts as the user in Google's own apps: `ui/<path>` under the user. */
  ui<T = unknown>(
    user: GoogleUser,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    return this.control<T>(
      method,
      `/_emulator/google/users/${encodeURIComponent(user.email)}/ui/${path}`,
      body,
    );
  }

  /** A state view of the user (`calendar/events`, `gmail/messages`, `tasks`). */
  async state<T = unknown>(user: GoogleUser, path: string): Promise<T> {
    return (await this.control<T>('GET', `/_emulator/google/users/${encodeURIComponent(user.email)}/${path}`))
      .body;
  }

  close(): Promise<void> {
    return this.emulators.close();
  }
}
