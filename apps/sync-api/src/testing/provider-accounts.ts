import { randomBytes } from 'node:crypto';
import { emulatorControl, type RunningEmulators, startEmulators } from '@syncline/emulators';

/** OAuth tokens as a connection stores them. */
export interface OAuthTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

/** A HubSpot portal in the emulator, with credentials of it of both kinds. */
export interface TestPortal {
  portalId: number;
  /** The portal id as a connection names it. */
  externalAccountId: string;
  privateAppToken: string;
  oauth: OAuthTokens;
}

/** A Google user in the emulator, and OAuth tokens of them (granted the email scope: provable). */
export interface TestGoogleAccount {
  email: string;
  externalAccountId: string;
  oauth: OAuthTokens;
}

/**
 * Provider accounts for API tests that connect them: since a connection's account is proven
 * by its credentials (the provider must name it), tests need tokens a provider recognises.
 * The emulators (in this process, free ports), the settings that point an app at them, and
 * portals and Google users with fresh tokens.
 */
export class ProviderAccounts {
  private constructor(
    readonly emulators: RunningEmulators,
    private nextPortal: number,
  ) {}

  static async start(): Promise<ProviderAccounts> {
    return new ProviderAccounts(
      await startEmulators({ hubspotPort: 0, googlePort: 0 }),
      10_000 + Math.floor(Math.random() * 80_000),
    );
  }

  /** What a test app needs to ask these emulators whose accounts credentials open. */
  get env(): NodeJS.ProcessEnv {
    return {
      HUBSPOT_API_BASE_URL: this.emulators.hubspotUrl,
      GOOGLE_API_ROOT_URL: `${this.emulators.googleUrl}/`,
      GOOGLE_TOKEN_URL: `${this.emulators.googleUrl}/token`,
    };
  }

  /** A portal (a new one, or `portalId` again: the same portal, new tokens), and a private app token and OAuth tokens of it. */
  async hubspot(portalId: number = this.nextPortal++): Promise<TestPortal> {
    const grant = await this.post<{ accessToken: string; refreshToken: string }>(
      this.emulators.hubspotUrl,
      '/_emulator/hubspot/portals',
      { portalId, appId: 5001, clientSecret: 'provider-accounts-secret' },
    );
    const app = await this.post<{ accessToken: string }>(
      this.emulators.hubspotUrl,
      `/_emulator/hubspot/portals/${portalId}/private-apps`,
      {},
    );
    return {
      portalId,
      externalAccountId: String(portalId),
      privateAppToken: app.accessToken,
      oauth: { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: inHalfAnHour() },
    };
  }

  /** A Google user (made when new) and a fresh grant of theirs. */
  async google(email = `rep-${randomBytes(4).toString('hex')}@accounts.example`): Promise<TestGoogleAccount> {
    const grant = await this.post<{ email: string; accessToken: string; refreshToken: string }>(
      this.emulators.googleUrl,
      '/_emulator/google/users',
      { email },
    );
    return {
      email: grant.email,
      externalAccountId: grant.email,
      oauth: { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: inHalfAnHour() },
    };
  }

  close(): Promise<void> {
    return this.emulators.close();
  }

  private post<T>(base: string, path: string, body: unknown): Promise<T> {
    return emulatorControl(base)<T>('POST', path, body);
  }
}

const inHalfAnHour = (): string => new Date(Date.now() + 1_800_000).toISOString();
