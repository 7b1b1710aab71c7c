import { Inject, Injectable } from '@nestjs/common';
import { microsoftAccountId, PERSONAL_ACCOUNTS_TENANT } from '@syncline/connectors';
import { err, ok, type ProviderKey, providerEndpoints, type Result } from '@syncline/core';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import { z } from 'zod';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { MicrosoftProduct } from './oauth.schemas';
import {
  httpFailure,
  type OAuthAccount,
  type OAuthFailure,
  type OAuthProviderClient,
  oauthRedirectUri,
} from './oauth-provider.client';

/** The access each Microsoft connection needs (what its connector calls). */
export const MICROSOFT_PRODUCT_SCOPES: Record<MicrosoftProduct, string> = {
  'microsoft-calendar': 'Calendars.ReadWrite',
  'microsoft-mail': 'Mail.Read',
  'microsoft-todo': 'Tasks.ReadWrite',
};
/**
 * `openid profile email`: an id token naming the user (`oid`, `tid`, `preferred_username`);
 * `offline_access`: a refresh token; `User.Read`: Graph's `/me`, by which the workers prove
 * the account again whenever its tokens change.
 */
export const MICROSOFT_IDENTITY_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'User.Read'];
/** Granted, or no connection can prove its account. */
const ACCOUNT_SCOPE = 'User.Read';

const HTTP_TIMEOUT_MS = 15_000;
/** How far our clock may be from the identity platform's when the id token's times are checked. */
const CLOCK_TOLERANCE_S = 120;
const GRAPH_RESOURCE = 'https://graph.microsoft.com/';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isMicrosoftProduct = (product: ProviderKey): product is MicrosoftProduct =>
  product in MICROSOFT_PRODUCT_SCOPES;

const tokenAnswer = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  id_token: z.string().min(1).optional(),
  expires_in: z.coerce.number().positive().optional(),
  scope: z.string().optional(),
});
const tokenRefusal = z.looseObject({
  error: z.string(),
  error_description: z.string().optional(),
  error_codes: z.array(z.number()).optional(),
});

/**
 * The identity platform's refusals of a code exchange that say more than its status does, by
 * AADSTS number (`error_codes`, or the `AADSTS<n>:` that starts the description). Any other
 * 4xx is `refused`; 429, 5xx and no answer are `unavailable` (httpFailure).
 */
const AADSTS_FAILURES: Readonly<Record<number, { code: OAuthFailure['code']; reason: string }>> = {
  65001: { code: 'consent_incomplete', reason: 'nobody consented to the access asked for' },
  65004: { code: 'consent_incomplete', reason: 'the user declined the consent' },
  54005: { code: 'refused', reason: 'the authorization code was already redeemed' },
  70008: { code: 'refused', reason: 'the authorization code expired' },
  50173: { code: 'refused', reason: 'the grant was revoked' },
  700082: { code: 'refused', reason: 'the grant expired' },
  50011: { code: 'refused', reason: 'the redirect URI is not the one the code was issued for' },
  501481: {
    code: 'refused',
    reason: 'the PKCE verifier does not match the challenge the code was issued for',
  },
  90002: { code: 'refused', reason: 'MICROSOFT_TENANT names no tenant' },
  700016: { code: 'refused', reason: 'MICROSOFT_CLIENT_ID names no app registration' },
  7000215: { code: 'refused', reason: 'MICROSOFT_CLIENT_SECRET is not the app registration secret' },
};

/** Who an id token names: the keys of the account (`tid`, `oid`) and the sign-in name, for display. */
export interface MicrosoftIdentity {
  tenantId: string;
  objectId: string;
  username: string | null;
  /** The user's address: the `email` claim, else the sign-in name when it is one; lower case. */
  address: string | null;
}

/**
 * Checks an id token from the identity platform: signed by a key of the tenant's key set
 * (`<MICROSOFT_LOGIN_URL>/<MICROSOFT_TENANT>/discovery/v2.0/keys`, fetched once and cached),
 * for our client id, not expired, issued by the user's own tenant
 * (`<MICROSOFT_LOGIN_URL>/<tid>/v2.0`), and by a tenant MICROSOFT_TENANT lets in.
 */
export class MicrosoftIdTokenVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;
  private readonly loginUrl: string;

  constructor(private readonly settings: { loginUrl: string; tenant: string; clientId: string }) {
    this.loginUrl = settings.loginUrl.replace(/\/+$/, '');
    this.keys = createRemoteJWKSet(new URL(`${this.loginUrl}/${settings.tenant}/discovery/v2.0/keys`), {
      timeoutDuration: HTTP_TIMEOUT_MS,
    });
  }

  async verify(idToken: string): Promise<Result<MicrosoftIdentity, OAuthFailure>> {
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.keys, {
        audience: this.settings.clientId,
        algorithms: ['RS256'],
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'iss', 'tid'],
      }));
    } catch (error) {
      if (keySetUnavailable(error)) {
        return err({
          code: 'unavailable',
          message: "fetching Microsoft's id-token signing keys failed; try again",
        });
      }
      return err({ code: 'refused', message: `Microsoft's id token did not verify: ${joseReason(error)}` });
    }
    const { tid, oid, iss, preferred_username: username, email } = claims;
    if (typeof tid !== 'string' || !GUID.test(tid) || typeof oid !== 'string' || !GUID.test(oid)) {
      return err({
        code: 'refused',
        message: "Microsoft's id token names no tenant and object id (tid, oid)",
      });
    }
    if (iss !== `${this.loginUrl}/${tid}/v2.0`) {
      return err({ code: 'refused', message: "Microsoft's id token was not issued by the user's tenant" });
    }
    if (!tenantAllowed(this.settings.tenant, tid)) {
      return err({
        code: 'refused',
        message: `MICROSOFT_TENANT (${this.settings.tenant}) does not let this tenant in`,
      });
    }
    return ok({
      tenantId: tid.toLowerCase(),
      objectId: oid.toLowerCase(),
      username: typeof username === 'string' && username !== '' ? username : null,
      address:
        [email, username].find((a): a is string => typeof a === 'string' && a.includes('@'))?.toLowerCase() ??
        null,
    });
  }
}

/**
 * Microsoft's authorization-code flow (identity platform v2.0) for a confidential client,
 * with PKCE (S256) as the platform recommends for those too: the consent page at
 * MICROSOFT_LOGIN_URL/MICROSOFT_TENANT, the code redeemed at its token endpoint
 * (form-encoded, with the client secret and the verifier), the account named by the verified
 * id token.
 * One consent covers every product asked for; each product's access is checked in the
 * granted `scope`, since an administrator or the user may grant less than asked.
 */
@Injectable()
export class MicrosoftOAuthClient implements OAuthProviderClient {
  readonly provider = 'microsoft' as const;
  private readonly redirectUri: string;
  private readonly tokenUrl: string;
  private readonly authorizeEndpoint: string;
  private readonly idTokens: MicrosoftIdTokenVerifier;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const { microsoftTokenUrl, microsoftAuthorizeUrl } = providerEndpoints(config);
    this.redirectUri = oauthRedirectUri(config, this.provider);
    this.tokenUrl = microsoftTokenUrl;
    this.authorizeEndpoint = microsoftAuthorizeUrl;
    this.idTokens = new MicrosoftIdTokenVerifier({
      loginUrl: config.MICROSOFT_LOGIN_URL,
      tenant: config.MICROSOFT_TENANT,
      clientId: config.MICROSOFT_CLIENT_ID ?? '',
    });
  }

  missingSettings(): string[] {
    const { MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET } = this.config;
    return Object.entries({ MICROSOFT_CLIENT_ID, MICROSOFT_CLIENT_SECRET })
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
  }

  authorizeUrl(state: string, products: readonly ProviderKey[], codeChallenge: string): string {
    const url = new URL(this.authorizeEndpoint);
    url.searchParams.set('client_id', this.config.MICROSOFT_CLIENT_ID ?? '');
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('response_mode', 'query');
    url.searchParams.set(
      'scope',
      [
        ...MICROSOFT_IDENTITY_SCOPES,
        ...products.filter(isMicrosoftProduct).map((p) => MICROSOFT_PRODUCT_SCOPES[p]),
      ].join(' '),
    );
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    // An admin may connect several mailboxes from one browser: always ask which account.
    // (A refresh token comes with offline_access whatever the prompt, and the platform asks
    // for consent by itself when a product's access is new.)
    url.searchParams.set('prompt', 'select_account');
    return url.toString();
  }

  async exchange(
    code: string,
    products: readonly ProviderKey[],
    codeVerifier: string,
  ): Promise<Result<OAuthAccount, OAuthFailure>> {
    const startedAt = Date.now();
    const redeemed = await this.redeem(code, codeVerifier);
    if (!redeemed.ok) return redeemed;
    const tokens = redeemed.value;
    if (!tokens.refresh_token || !tokens.id_token) {
      return err({
        code: 'refused',
        message:
          'Microsoft answered the code exchange without a refresh or id token (offline_access, openid)',
      });
    }
    const granted = grantedScopes(tokens.scope);
    const missing = products
      .filter(isMicrosoftProduct)
      .filter((p) => !holds(granted, MICROSOFT_PRODUCT_SCOPES[p]));
    if (missing.length > 0 || !holds(granted, ACCOUNT_SCOPE)) {
      const lacking = missing.length > 0 ? missing.join(', ') : `proving the account (${ACCOUNT_SCOPE})`;
      return err({
        code: 'consent_incomplete',
        message: `the consent did not grant the access ${lacking} needs; connect again and allow it`,
      });
    }
    const identity = await this.idTokens.verify(tokens.id_token);
    if (!identity.ok) return identity;
    return ok({
      externalAccountId: microsoftAccountId(identity.value.tenantId, identity.value.objectId),
      // Named as Google's are, by product and address (the app does it from accountAddress).
      displayName: null,
      address: identity.value.address,
      credentials: {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: new Date(startedAt + (tokens.expires_in ?? 3_600) * 1000).toISOString(),
      },
    });
  }

  private async redeem(
    code: string,
    codeVerifier: string,
  ): Promise<Result<z.output<typeof tokenAnswer>, OAuthFailure>> {
    const what = 'the Microsoft code exchange';
    let res: Response;
    try {
      res = await fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          client_id: this.config.MICROSOFT_CLIENT_ID ?? '',
          client_secret: this.config.MICROSOFT_CLIENT_SECRET ?? '',
          grant_type: 'authorization_code',
          code,
          redirect_uri: this.redirectUri,
          code_verifier: codeVerifier,
        }),
        signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      });
    } catch {
      return err(httpFailure(undefined, undefined, what));
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) return err(tokenFailure(res.status, body, what));
    const tokens = tokenAnswer.safeParse(body);
    if (!tokens.success) {
      return err({
        code: 'refused',
        message: 'Microsoft answered the code exchange without an access token',
      });
    }
    return ok(tokens.data);
  }
}

/** A refusal of the token endpoint as an OAuthFailure: by its AADSTS number where we know it, else by status. */
function tokenFailure(status: number, body: unknown, what: string): OAuthFailure {
  const refusal = tokenRefusal.safeParse(body);
  if (!refusal.success) return httpFailure(status, undefined, what);
  const number =
    refusal.data.error_codes?.[0] ?? Number(/^AADSTS(\d+)/.exec(refusal.data.error_description ?? '')?.[1]);
  const known = AADSTS_FAILURES[number];
  if (known && status < 500 && status !== 429) {
    return { code: known.code, message: `${what} was refused (AADSTS${number}: ${known.reason})` };
  }
  return httpFailure(
    status,
    Number.isFinite(number) ? `${refusal.data.error} AADSTS${number}` : refusal.data.error,
    what,
  );
}

/** The granted `scope` by short name in lower case (Graph's scopes may come as full URIs). */
function grantedScopes(scope: string | undefined): Set<string> {
  const names = (scope ?? '').split(/\s+/).filter((s) => s !== '');
  return new Set(
    names.map((s) =>
      (s.toLowerCase().startsWith(GRAPH_RESOURCE) ? s.slice(GRAPH_RESOURCE.length) : s).toLowerCase(),
    ),
  );
}

/** Whether `scope` is granted, itself or as its `ReadWrite` (which includes reading). */
function holds(granted: ReadonlySet<string>, scope: string): boolean {
  const name = scope.toLowerCase();
  return granted.has(name) || (name.endsWith('.read') && granted.has(`${name}write`));
}

/** `common` lets any account in, `organizations` work accounts, `consumers` personal ones, a tenant id only its own. */
function tenantAllowed(setting: string, tid: string): boolean {
  const personal = tid.toLowerCase() === PERSONAL_ACCOUNTS_TENANT;
  switch (setting.toLowerCase()) {
    case 'common':
      return true;
    case 'organizations':
      return !personal;
    case 'consumers':
      return personal;
    default:
      // A tenant named by a domain is checked by the platform itself (it signs in no one else).
      return !GUID.test(setting) || setting.toLowerCase() === tid.toLowerCase();
  }
}

/** The key set could not be fetched (no answer, a timeout, not a 200): worth retrying, not a bad token. */
function keySetUnavailable(error: unknown): boolean {
  if (error instanceof joseErrors.JWKSTimeout) return true;
  if (error instanceof joseErrors.JOSEError) return error.code === 'ERR_JOSE_GENERIC';
  return error instanceof TypeError || (error instanceof Error && error.name === 'AbortError');
}

/** jose's reason, without the token (its messages name claims and checks, never values). */
function joseReason(error: unknown): string {
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `${error.claim} ${error.reason}`;
  if (error instanceof joseErrors.JOSEError) return error.code;
  return 'not a JWT';
}
