import { randomUUID } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import type { ConnectionContext, RateBudget, TokenSource } from '../../contract/connector';
import type { LoggedRequest } from '../../contract/testing/harness';
import { StaticTokenSource } from '../../shared/token-source';

/**
 * Test plumbing for the Microsoft connectors: the emulators on free ports, an app registered
 * with the emulated identity platform, one mailbox per test with a grant for the app, and
 * connection contexts pointed at the emulated Graph (https; the test setup makes Node trust
 * the emulator's authority through NODE_EXTRA_CA_CERTS).
 */

/** Every delegated permission the three connectors ask for at connect. */
export const MICROSOFT_TEST_SCOPES = [
  'openid',
  'email',
  'offline_access',
  'User.Read',
  'Calendars.ReadWrite',
  'Mail.Read',
  'Tasks.ReadWrite',
] as const;

export interface MicrosoftUser {
  /** The sign-in name, which the control API and the request log key on. */
  upn: string;
  /** The object id (`oid`). */
  id: string;
  tenantId: string;
  accessToken: string;
  refreshToken: string;
}

/** Counts what was asked and never waits, so tests can see every request took budget. */
export class CountingBudget implements RateBudget {
  acquired = 0;
  async acquire(_kind?: 'default' | 'search', cost = 1): Promise<void> {
    this.acquired += cost;
  }
}

export class MicrosoftTestKit {
  private constructor(
    readonly emulators: RunningEmulators,
    readonly app: { clientId: string; clientSecret: string },
  ) {}

  static async start(): Promise<MicrosoftTestKit> {
    const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    const res = await fetch(`${emulators.microsoftUrl}/_emulator/microsoft/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ displayName: 'Syncline tests' }),
    });
    if (res.status !== 201) throw new Error(`registering the test app: ${res.status} ${await res.text()}`);
    return new MicrosoftTestKit(emulators, (await res.json()) as { clientId: string; clientSecret: string });
  }

  /** `https://localhost:PORT`: Graph's origin, the identity platform's and the control API's. */
  get url(): string {
    return this.emulators.microsoftUrl;
  }

  /** The identity platform's token endpoint (tenant `common`). */
  get tokenUrl(): string {
    return `${this.url}/common/oauth2/v2.0/token`;
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

  /** A fresh mailbox with a unique name (tests never see each other's records), granted `scopes`. */
  async createUser(
    label: string,
    options: { scopes?: readonly string[]; tenantId?: string; displayName?: string } = {},
  ): Promise<MicrosoftUser> {
    const upn = `${label}-${randomUUID().slice(0, 8)}@contoso.example`;
    const user = (
      await this.control<{ id: string; tenantId: string }>('POST', '/_emulator/microsoft/users', {
        userPrincipalName: upn,
        ...(options.displayName ? { displayName: options.displayName } : {}),
        ...(options.tenantId ? { tenantId: options.tenantId } : {}),
      })
    ).body;
    const grant = (
      await this.control<{ accessToken: string; refreshToken: string }>(
        'POST',
        `/_emulator/microsoft/users/${encodeURIComponent(upn)}/grants`,
        { clientId: this.app.clientId, scopes: options.scopes ?? MICROSOFT_TEST_SCOPES },
      )
    ).body;
    return { upn, id: user.id, tenantId: user.tenantId, ...grant };
  }

  /** A connection context for `user`; each call is a "new process". */
  context(
    user: MicrosoftUser,
    budget: RateBudget = new CountingBudget(),
    tokens?: TokenSource,
  ): ConnectionContext {
    return {
      connectionId: randomUUID(),
      workspaceId: randomUUID(),
      externalAccountId: `${user.tenantId}:${user.id}`,
      tokens: tokens ?? new StaticTokenSource(user.accessToken),
      budget,
      endpoints: {
        hubspotBaseUrl: this.emulators.hubspotUrl,
        googleRootUrl: `${this.emulators.googleUrl}/`,
        googleTokenUrl: `${this.emulators.googleUrl}/token`,
        microsoftGraphUrl: this.url,
      },
    };
  }

  /** An injected fault (`revoke-token`, `rate-limit`, `server-error`, `invalidate-cursors`, …) for `user`. */
  async fault(spec: { kind: string; account?: string; count?: number; ms?: number }): Promise<void> {
    await this.control('POST', '/_emulator/faults', { service: 'microsoft', ...spec });
  }

  /** The user's Graph requests so far, oldest first (paths under `/v1.0`). */
  async requests(user: MicrosoftUser): Promise<LoggedRequest[]> {
    return (
      await this.control<LoggedRequest[]>(
        'GET',
        `/_emulator/requests?service=microsoft&account=${encodeURIComponent(user.upn)}`,
      )
    ).body;
  }

  /** Acts as the user in Outlook or To Do: `ui/<path>` under the user (`calendar/events`, `mail/messages`, `todo/tasks`). */
  ui<T = unknown>(
    user: MicrosoftUser,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    return this.control<T>(
      method,
      `/_emulator/microsoft/users/${encodeURIComponent(user.upn)}/ui/${path}`,
      body,
    );
  }

  /** A state view of the user (`calendar/events`, `mail/messages`, `todo/tasks`). */
  async state<T = unknown>(user: MicrosoftUser, path: string): Promise<T> {
    return (
      await this.control<T>('GET', `/_emulator/microsoft/users/${encodeURIComponent(user.upn)}/${path}`)
    ).body;
  }

  close(): Promise<void> {
    return this.emulators.close();
  }
}
