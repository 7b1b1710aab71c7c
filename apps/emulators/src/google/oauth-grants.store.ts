import { createHash, timingSafeEqual } from 'node:crypto';
import type { SeededRandom } from './google-ids';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
const AUTH_CODE_TTL_MS = 10 * 60_000;

/** What a user made through the control API consented to: every product, and their address. */
export const DEFAULT_SCOPE = [
  'https://www.googleapis.com/auth/userinfo.email',
  'https://www.googleapis.com/auth/calendar',
  'https://www.googleapis.com/auth/gmail.readonly',
  'https://www.googleapis.com/auth/tasks',
].join(' ');

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** One user's consent to the client: a refresh token and the access tokens minted from it. */
interface Grant {
  email: string;
  scope: string;
  refreshToken: string;
  revoked: boolean;
}

interface AccessToken {
  grant: Grant;
  expiresAt: number;
}

interface AuthCode {
  email: string;
  redirectUri: string;
  scope: string;
  /** access_type=offline: only then does the code exchange hand out a refresh token. */
  offline: boolean;
  expiresAt: number;
  sign: CodeSignIn;
}

export type CodeChallengeMethod = 'S256' | 'plain';

/** What an OpenID Connect authorize request adds to its code: echoed in the id token, or checked at the exchange. */
export interface CodeSignIn {
  nonce?: string;
  /** PKCE (RFC 7636): the exchange must then present the verifier behind it. */
  codeChallenge?: { value: string; method: CodeChallengeMethod };
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  scope: string;
}

export type AuthenticateResult =
  | { ok: true; email: string; scope: string }
  /** `email` is known when the token was real but has expired or been revoked. */
  | { ok: false; email?: string };

/**
 * The emulator's single OAuth client and every grant made to it. Revoking a grant (either
 * of its tokens, or the revoke-token fault) kills the refresh token and every access token
 * minted from it, as Google does.
 */
export class OAuthGrantStore {
  readonly client: OAuthClientCredentials;
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly codes = new Map<string, AuthCode>();

  constructor(
    private readonly rng: SeededRandom,
    private readonly now: () => number,
  ) {
    // Drawn first from a fresh generator, so the client survives a reset unchanged.
    this.client = {
      clientId: `${rng.digits(12)}-${rng.base32hex(32)}.apps.googleusercontent.com`,
      clientSecret: `GOCSPX-${rng.base64url(28)}`,
    };
  }

  checkClient(clientId: string | undefined, clientSecret: string | undefined): boolean {
    return clientId === this.client.clientId && clientSecret === this.client.clientSecret;
  }

  issueGrant(email: string, scope = DEFAULT_SCOPE): IssuedTokens {
    const grant: Grant = { email, scope, refreshToken: `1//${this.rng.base64url(43)}`, revoked: false };
    this.refreshTokens.set(grant.refreshToken, grant);
    return { accessToken: this.mintAccessToken(grant), refreshToken: grant.refreshToken, scope };
  }

  authenticate(token: string): AuthenticateResult {
    const access = this.accessTokens.get(token);
    if (!access) return { ok: false };
    if (access.grant.revoked || access.expiresAt <= this.now())
      return { ok: false, email: access.grant.email };
    return { ok: true, email: access.grant.email, scope: access.grant.scope };
  }

  /** The owner of a refresh token, revoked or not (for the request log and faults). */
  emailOfRefreshToken(token: string): string | undefined {
    return this.refreshTokens.get(token)?.email;
  }

  refresh(refreshToken: string): { accessToken: string; scope: string } | undefined {
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant || grant.revoked) return undefined;
    return { accessToken: this.mintAccessToken(grant), scope: grant.scope };
  }

  /** Revokes the grant behind an access or refresh token; false if the token is unknown. */
  revoke(token: string): boolean {
    const grant = this.refreshTokens.get(token) ?? this.accessTokens.get(token)?.grant;
    if (!grant || grant.revoked) return false;
    grant.revoked = true;
    return true;
  }

  revokeAll(email: string): void {
    for (const grant of this.refreshTokens.values()) if (grant.email === email) grant.revoked = true;
  }

  /** Ages the user's access tokens past their hour, so clients must refresh (control API). */
  expireAccessTokens(email: string): void {
    const now = this.now();
    for (const access of this.accessTokens.values()) {
      if (access.grant.email === email) access.expiresAt = Math.min(access.expiresAt, now);
    }
  }

  createCode(
    email: string,
    redirectUri: string,
    scope: string,
    offline: boolean,
    sign: CodeSignIn = {},
  ): string {
    const code = `4/0${this.rng.base64url(70)}`;
    this.codes.set(code, {
      email,
      redirectUri,
      scope,
      offline,
      sign,
      expiresAt: this.now() + AUTH_CODE_TTL_MS,
    });
    return code;
  }

  /**
   * Codes are single use, bound to the redirect URI they were issued for and, when issued
   * with a PKCE challenge, to the verifier behind it.
   */
  exchangeCode(
    code: string,
    redirectUri: string | undefined,
    codeVerifier?: string,
  ):
    | { email: string; accessToken: string; refreshToken?: string; scope: string; nonce?: string }
    | undefined {
    const entry = this.codes.get(code);
    this.codes.delete(code);
    if (!entry || entry.expiresAt <= this.now() || entry.redirectUri !== redirectUri) return undefined;
    const { codeChallenge, nonce } = entry.sign;
    if (codeChallenge && !pkceVerifierMatches(codeChallenge, codeVerifier)) return undefined;
    const issued = this.issueGrant(entry.email, entry.scope);
    return {
      email: entry.email,
      accessToken: issued.accessToken,
      scope: issued.scope,
      ...(entry.offline ? { refreshToken: issued.refreshToken } : {}),
      ...(nonce === undefined ? {} : { nonce }),
    };
  }

  /** The owner of a pending authorization code (for the request log). */
  emailOfCode(code: string): string | undefined {
    return this.codes.get(code)?.email;
  }

  private mintAccessToken(grant: Grant): string {
    const token = `ya29.${this.rng.base64url(120)}`;
    this.accessTokens.set(token, { grant, expiresAt: this.now() + ACCESS_TOKEN_TTL_SECONDS * 1000 });
    return token;
  }
}

/** RFC 7636 §4.6: S256 compares BASE64URL(SHA256(verifier)) with the challenge, plain the verifier itself. */
export function pkceVerifierMatches(
  challenge: { value: string; method: CodeChallengeMethod },
  verifier: string | undefined,
): boolean {
  if (verifier === undefined) return false;
  const derived =
    challenge.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  const a = Buffer.from(derived);
  const b = Buffer.from(challenge.value);
  return a.length === b.length && timingSafeEqual(a, b);
}
