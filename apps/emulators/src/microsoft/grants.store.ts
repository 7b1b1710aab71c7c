import { randomBytes } from 'node:crypto';

/** Why a refresh token no longer works, as the identity platform says it (AADSTS codes). */
export type GrantFailure =
  /** The grant was revoked (a password change, an admin): AADSTS50173. */
  | 'revoked'
  /** Unused too long: AADSTS700082. */
  | 'expired'
  /** Consent was withdrawn for the app: AADSTS65001. */
  | 'no-consent';

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** Seconds the access token lives. */
  expiresIn: number;
  scope: string;
}

interface AccessGrant {
  userId: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
  family: string;
}

interface RefreshGrant {
  userId: string;
  clientId: string;
  scopes: string[];
  family: string;
}

const ACCESS_LIFETIME_S = 3_600;
const token = (prefix: string) => `${prefix}.${randomBytes(24).toString('base64url')}`;

/**
 * Access and refresh tokens of the emulated identity platform. A refresh token replaces
 * itself with a fresh one on every use, and the old one keeps working (Microsoft does not
 * revoke it); a grant's tokens (its family, from one consent) fail together once revoked,
 * expired or its consent withdrawn.
 */
export class MicrosoftGrants {
  private readonly access = new Map<string, AccessGrant>();
  private readonly refresh = new Map<string, RefreshGrant>();
  /** Families that failed, and why. */
  private readonly failed = new Map<string, GrantFailure>();

  constructor(private readonly now: () => number) {}

  /** A new grant (a consent, or the control API's shortcut). */
  issue(userId: string, clientId: string, scopes: readonly string[]): IssuedTokens {
    return this.mint(userId, clientId, [...scopes], token('family'));
  }

  /** Redeems a refresh token: new access and refresh tokens, or why not. */
  redeem(
    refreshToken: string,
    clientId: string,
  ): { ok: true; tokens: IssuedTokens } | { ok: false; failure: GrantFailure | 'unknown' } {
    const grant = this.refresh.get(refreshToken);
    if (!grant || grant.clientId !== clientId) return { ok: false, failure: 'unknown' };
    const failure = this.failed.get(grant.family);
    if (failure) return { ok: false, failure };
    return { ok: true, tokens: this.mint(grant.userId, grant.clientId, grant.scopes, grant.family) };
  }

  /** The user an access token stands for, if it is live, and the app it was issued to. */
  authenticate(
    accessToken: string,
  ): { ok: true; userId: string; clientId: string; scopes: string[] } | { ok: false; userId?: string } {
    const grant = this.access.get(accessToken);
    if (!grant) return { ok: false };
    if (grant.expiresAt <= this.now() || this.failed.has(grant.family))
      return { ok: false, userId: grant.userId };
    return { ok: true, userId: grant.userId, clientId: grant.clientId, scopes: grant.scopes };
  }

  /** Whose a refresh token is, live or not (the token endpoint logs and checks it before redeeming). */
  holderOf(refreshToken: string): { userId: string; clientId: string; scopes: string[] } | undefined {
    const grant = this.refresh.get(refreshToken);
    return grant && { userId: grant.userId, clientId: grant.clientId, scopes: grant.scopes };
  }

  /** Every grant of the user (for one app, or all) fails from now on with `failure`. */
  fail(userId: string, failure: GrantFailure, clientId?: string): void {
    for (const grant of [...this.access.values(), ...this.refresh.values()])
      if (grant.userId === userId && (clientId === undefined || grant.clientId === clientId))
        this.failed.set(grant.family, failure);
  }

  /** Access tokens of the user expire now (refresh tokens still work). */
  expireAccess(userId: string): void {
    for (const grant of this.access.values()) if (grant.userId === userId) grant.expiresAt = this.now();
  }

  private mint(userId: string, clientId: string, scopes: string[], family: string): IssuedTokens {
    const accessToken = token('eyJ0eXAi');
    const refreshToken = token('M.R3_BAY');
    this.access.set(accessToken, {
      userId,
      clientId,
      scopes,
      family,
      expiresAt: this.now() + ACCESS_LIFETIME_S * 1_000,
    });
    this.refresh.set(refreshToken, { userId, clientId, scopes, family });
    return { accessToken, refreshToken, expiresIn: ACCESS_LIFETIME_S, scope: scopes.join(' ') };
  }
}
