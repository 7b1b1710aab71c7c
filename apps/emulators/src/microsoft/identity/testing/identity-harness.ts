import { createHash, randomBytes } from 'node:crypto';
import { type RunningEmulators, startEmulators } from '../../../emulators';
import { controlRequest, type Json } from '../../testing/microsoft-harness';
import type { MicrosoftUser } from '../../user.store';
import type { MicrosoftApp } from '../apps.store';

export type { Json };

export const REDIRECT_URI = 'http://127.0.0.1:9/auth/microsoft/callback';

export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
export const randomString = (): string => randomBytes(32).toString('base64url');

/**
 * Every emulator started as the app starts them, seen from the Microsoft one: its control
 * routes, the authorize URL an app would build, the token endpoint, and a clock to move.
 */
export class IdentityHarness {
  private offsetMs = 0;

  private constructor(private readonly running: RunningEmulators) {
    running.context.now = () => Date.now() + this.offsetMs;
  }

  static async start(): Promise<IdentityHarness> {
    return new IdentityHarness(await startEmulators({ hubspotPort: 0, googlePort: 0 }));
  }

  /** `https://localhost:PORT`, the identity platform's and Graph's origin alike. */
  get url(): string {
    return this.running.microsoftUrl;
  }

  advanceClock(ms: number): void {
    this.offsetMs += ms;
  }

  async reset(): Promise<void> {
    this.offsetMs = 0;
    await this.control('POST', '/_emulator/reset');
  }

  control<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    return controlRequest<T>(this.url, method, path, body);
  }

  async registerApp(input: Partial<MicrosoftApp> = {}): Promise<MicrosoftApp> {
    const { status, body } = await this.control<MicrosoftApp>('POST', '/_emulator/microsoft/apps', {
      redirectUris: [REDIRECT_URI],
      ...input,
    });
    if (status !== 201) throw new Error(`app registration answered ${status}`);
    return body;
  }

  async addUser(userPrincipalName: string, extra: { tenantId?: string; displayName?: string } = {}) {
    const { status, body } = await this.control<MicrosoftUser>('POST', '/_emulator/microsoft/users', {
      userPrincipalName,
      ...extra,
    });
    if (status !== 201) throw new Error(`adding ${userPrincipalName} answered ${status}`);
    return body;
  }

  /** An authorize URL as an app builds it: code flow, the harness's redirect URI, these parameters. */
  authorizeUrl(app: MicrosoftApp, params: Record<string, string>, tenant = 'common'): URL {
    const url = new URL(`${this.url}/${tenant}/oauth2/v2.0/authorize`);
    for (const [name, value] of Object.entries({
      client_id: app.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      ...params,
    })) {
      url.searchParams.set(name, value);
    }
    return url;
  }

  /** A form-encoded token request, as sent. */
  async token(
    form: Record<string, string>,
    options: { tenant?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${this.url}/${options.tenant ?? 'common'}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
      body: new URLSearchParams(form),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** Whether Graph takes the access token: its guard answers 401 to one it does not. */
  async graphAccepts(accessToken: string): Promise<boolean> {
    const res = await fetch(`${this.url}/oidc/userinfo`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    await res.body?.cancel();
    return res.status !== 401;
  }

  close(): Promise<void> {
    return this.running.close();
  }
}
