import type { Prng } from './prng';

/** HubSpot's OAuth access tokens last 30 minutes. */
export const ACCESS_TOKEN_TTL_SECONDS = 1800;

export const DEFAULT_SCOPES = [
  'oauth',
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  'crm.objects.deals.read',
  'crm.objects.deals.write',
  'crm.objects.owners.read',
  'sales-email-read',
];

export interface Grant {
  portalId: number;
  appId: number;
  clientId: string;
  userId: number;
  scopes: string[];
}

export interface AccessToken extends Grant {
  token: string;
  expiresAt: number;
  revoked: boolean;
  /** `private_app`: a private app's token (`pat-…`), which never expires and no OAuth route knows. */
  kind: 'oauth' | 'private_app';
}

export interface RefreshToken extends Grant {
  token: string;
  revoked: boolean;
}

interface AuthorizationCode extends Grant {
  redirectUri: string;
  expiresAt: number;
  used: boolean;
}

export type AccessCheck =
  | { ok: true; token: AccessToken }
  | { ok: false; reason: 'MISSING' | 'UNKNOWN' }
  | { ok: false; reason: 'EXPIRED' | 'REVOKED'; token: AccessToken };

/** Access tokens, refresh tokens and authorization codes of every portal. */
export class TokenStore {
  private readonly access = new Map<string, AccessToken>();
  private readonly refresh = new Map<string, RefreshToken>();
  private readonly codes = new Map<string, AuthorizationCode>();

  /** Private app tokens come from a stream of their own, so issuing one leaves OAuth tokens as they were. */
  constructor(
    private readonly prng: Prng,
    private readonly privateAppPrng: Prng,
  ) {}

  issueAccess(grant: Grant, now: number): AccessToken {
    // HubSpot access tokens are opaque strings starting with "C", refresh tokens UUID-like.
    const token: AccessToken = {
      ...grant,
      token: `C${this.prng.hex(8)}-emu-${grant.portalId}-${this.prng.hex(40)}`,
      expiresAt: now + ACCESS_TOKEN_TTL_SECONDS * 1000,
      revoked: false,
      kind: 'oauth',
    };
    this.access.set(token.token, token);
    return token;
  }

  /**
   * A private app's access token (`pat-na1-<uuid>`, as HubSpot shows it in the app's settings):
   * it works on the CRM routes like an OAuth token but never expires, and the OAuth token-info
   * route does not know it (`GET /account-info/v3/details` names its portal).
   */
  issuePrivateApp(grant: Grant): AccessToken {
    const token: AccessToken = {
      ...grant,
      token: `pat-na1-${this.privateAppPrng.uuid()}`,
      expiresAt: Number.POSITIVE_INFINITY,
      revoked: false,
      kind: 'private_app',
    };
    this.access.set(token.token, token);
    return token;
  }

  issueRefresh(grant: Grant): RefreshToken {
    const token: RefreshToken = { ...grant, token: this.prng.uuid(), revoked: false };
    this.refresh.set(token.token, token);
    return token;
  }

  issueCode(grant: Grant, redirectUri: string, now: number): string {
    const code = this.prng.uuid();
    this.codes.set(code, { ...grant, redirectUri, expiresAt: now + 10 * 60_000, used: false });
    return code;
  }

  checkAccess(token: string | undefined, now: number): AccessCheck {
    if (!token) return { ok: false, reason: 'MISSING' };
    const found = this.access.get(token);
    if (!found) return { ok: false, reason: 'UNKNOWN' };
    if (found.revoked) return { ok: false, reason: 'REVOKED', token: found };
    if (found.expiresAt <= now) return { ok: false, reason: 'EXPIRED', token: found };
    return { ok: true, token: found };
  }

  /** An OAuth access token (what `GET /oauth/v1/access-tokens/{token}` describes); never a private app's. */
  findAccess(token: string): AccessToken | undefined {
    const found = this.access.get(token);
    return found?.kind === 'oauth' ? found : undefined;
  }

  findRefresh(token: string | undefined): RefreshToken | undefined {
    const found = token === undefined ? undefined : this.refresh.get(token);
    return found && !found.revoked ? found : undefined;
  }

  /** Peeks at a refresh token whether revoked or not (to find the portal it belongs to). */
  portalOfRefresh(token: string | undefined): number | undefined {
    return token === undefined ? undefined : this.refresh.get(token)?.portalId;
  }

  /** An authorization code is good once, for ten minutes, with the redirect URI it was issued for. */
  redeemCode(
    code: string | undefined,
    clientId: string | undefined,
    redirectUri: string | undefined,
    now: number,
  ): Grant | undefined {
    const found = code === undefined ? undefined : this.codes.get(code);
    if (!found || found.used || found.expiresAt <= now) return undefined;
    if (found.clientId !== clientId || found.redirectUri !== redirectUri) return undefined;
    found.used = true;
    const { portalId, appId, userId, scopes } = found;
    return { portalId, appId, clientId: found.clientId, userId, scopes };
  }

  revokeRefresh(token: string): boolean {
    const found = this.refresh.get(token);
    if (!found) return false;
    found.revoked = true;
    return true;
  }

  /** The revoke-token fault: every token of the portal dies (a private app's too: it stands for revoked credentials). */
  revokePortal(portalId: number): void {
    for (const t of this.access.values()) if (t.portalId === portalId) t.revoked = true;
    for (const t of this.refresh.values()) if (t.portalId === portalId) t.revoked = true;
  }

  forgetPortal(portalId: number): void {
    for (const [k, t] of this.access) if (t.portalId === portalId) this.access.delete(k);
    for (const [k, t] of this.refresh) if (t.portalId === portalId) this.refresh.delete(k);
    for (const [k, t] of this.codes) if (t.portalId === portalId) this.codes.delete(k);
  }
}
