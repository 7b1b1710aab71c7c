import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { err, ok, type Result } from '@syncline/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import * as oidc from 'openid-client';
import { newPkce } from '../../common/pkce';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { MembersService } from '../../members/members.service';
import { sessionCookie } from '../sessions/session-cookie';
import { SessionsService } from '../sessions/sessions.service';
import type { OidcCallbackQuery } from './oidc.schemas';
import { OidcStateRepository, sha256Hex } from './oidc-state.repository';
import { safeReturnTo } from './return-to';

/** What a sign-in asks the provider for: who the person is, nothing of their data. */
export const OIDC_SCOPES = 'openid email profile';
/** How long the browser has between the start and the callback. */
export const OIDC_STATE_TTL_SECONDS = 600;
export const OIDC_CALLBACK_PATH = '/api/v1/auth/oidc/callback';
const DISCOVERY_TIMEOUT_SECONDS = 10;

/** Why a sign-in ended on the sign-in page, as `/sign-in?error=<code>`. */
export type SignInError =
  /** The person declined at the provider's consent page. */
  | 'access_denied'
  /** No member or pending invitation has that address. */
  | 'not_a_member'
  /** The provider does not vouch for the address (`email_verified` is not true). */
  | 'email_unverified'
  /** AUTH_ALLOWED_DOMAINS is set and the address's domain is not in it. */
  | 'domain_not_allowed'
  /** The state is unknown, expired, used, or was started by another browser. */
  | 'invalid_state'
  /** The code exchange or the id token failed (issuer, audience, nonce, signature, expiry, PKCE). */
  | 'invalid_token'
  /** The provider could not be reached or answered with an error of its own. */
  | 'provider_unavailable'
  /** OIDC_ISSUER_URL is not set. */
  | 'oidc_disabled';

/**
 * "Sign in with Google", or with any OpenID Connect provider by its issuer URL: the code flow
 * with PKCE, state and nonce (openid-client). The state and what the callback checks stay in
 * Redis, bound to the browser that started by a cookie whose hash is stored with them. Every
 * route answers with where to send the browser.
 */
@Injectable()
export class OidcSignInService {
  private readonly bindingCookie: { name: string; secure: boolean };
  private discovered: Promise<oidc.Configuration> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OidcStateRepository) private readonly states: OidcStateRepository,
    @Inject(MembersService) private readonly members: MembersService,
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @InjectPinoLogger(OidcSignInService.name) private readonly logger: PinoLogger,
  ) {
    const { secure } = sessionCookie(config);
    this.bindingCookie = { name: secure ? '__Host-syncline_oidc' : 'syncline_oidc', secure };
  }

  get enabled(): boolean {
    return this.config.OIDC_ISSUER_URL !== undefined;
  }

  /** Where to send the browser to sign in: the provider's authorize URL, or the sign-in page with an error. */
  async start(reply: FastifyReply, returnTo: string | undefined): Promise<string> {
    const configuration = await this.configuration();
    if (!configuration.ok) return this.failed(configuration.error, 'start');
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const pkce = await newPkce();
    const binding = randomBytes(32).toString('base64url');
    const record = {
      nonce,
      codeVerifier: pkce.verifier,
      returnTo: safeReturnTo(returnTo),
      browserHash: sha256Hex(binding),
    };
    if (!(await this.states.save(state, record, OIDC_STATE_TTL_SECONDS))) {
      throw new Error('a fresh OpenID Connect state was already pending');
    }
    reply.setCookie(this.bindingCookie.name, binding, {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.bindingCookie.secure,
      path: '/',
      maxAge: OIDC_STATE_TTL_SECONDS,
    });
    return oidc
      .buildAuthorizationUrl(configuration.value, {
        redirect_uri: this.redirectUri(),
        scope: OIDC_SCOPES,
        state,
        nonce,
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
      })
      .toString();
  }

  /**
   * The provider's redirect back: checks the state and the browser, exchanges the code, and
   * signs the member in. Where to send the browser next: `returnTo`, or the sign-in page.
   */
  async callback(request: FastifyRequest, answer: OidcCallbackQuery, reply: FastifyReply): Promise<string> {
    const query = searchParamsOf(answer);
    const binding = request.cookies?.[this.bindingCookie.name];
    reply.clearCookie(this.bindingCookie.name, {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.bindingCookie.secure,
      path: '/',
    });
    const state = query.get('state');
    const record = state ? await this.states.take(state) : null;
    if (!record || !state) return this.failed('invalid_state', 'callback', 'unknown, expired or used state');
    if (binding === undefined || binding === '') {
      return this.failed(
        'invalid_state',
        'callback',
        'no binding cookie: another browser, or cookies refused',
      );
    }
    if (!sameHash(sha256Hex(binding), record.browserHash)) {
      return this.failed('invalid_state', 'callback', 'the state was started by another browser');
    }
    const providerError = query.get('error');
    if (providerError !== null) {
      return providerError === 'access_denied'
        ? this.failed('access_denied', 'callback', 'declined at the consent page')
        : this.failed(
            'provider_unavailable',
            'callback',
            `the provider answered ${providerError.slice(0, 100)}`,
          );
    }
    const configuration = await this.configuration();
    if (!configuration.ok) return this.failed(configuration.error, 'callback');

    const email = await this.verifiedEmail(configuration.value, query, state, record);
    if (!email.ok) return this.failed(email.error.code, 'callback', email.error.reason);
    const domain = email.value.slice(email.value.lastIndexOf('@') + 1);
    const allowed = this.config.AUTH_ALLOWED_DOMAINS;
    if (allowed.length > 0 && !allowed.includes(domain)) {
      return this.failed('domain_not_allowed', 'callback', `an address at ${domain}`);
    }
    const member = await this.members.signInCandidate(email.value);
    if (!member) return this.failed('not_a_member', 'callback', `no member or invitation at ${domain}`);
    try {
      await this.sessions.start(reply, member);
    } catch (error) {
      // Removed between the lookup and the session: refused like any non-member.
      if (!(error instanceof UnauthorizedException)) throw error;
      return this.failed('not_a_member', 'callback', `the member may not sign in: ${error.message}`);
    }
    this.logger.info(
      { workspaceId: member.workspaceId, memberId: member.memberId },
      'signed in with OpenID Connect',
    );
    return record.returnTo;
  }

  /** The code exchange with every check of the state, nonce and PKCE verifier, then the address it proves. */
  private async verifiedEmail(
    configuration: oidc.Configuration,
    query: URLSearchParams,
    state: string,
    record: { nonce: string; codeVerifier: string },
  ): Promise<Result<string, { code: SignInError; reason: string }>> {
    const currentUrl = new URL(this.redirectUri());
    currentUrl.search = query.toString();
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
        expectedState: state,
        expectedNonce: record.nonce,
        pkceCodeVerifier: record.codeVerifier,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (error) {
      const code = isNetworkFailure(error) ? 'provider_unavailable' : 'invalid_token';
      return err({ code, reason: describe(error) });
    }
    const email = typeof claims?.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (email === '' || claims?.email_verified !== true) {
      return err({ code: 'email_unverified', reason: 'the id token names no verified address' });
    }
    return ok(email);
  }

  /** The issuer's metadata, discovered on first use; a failed discovery is tried again next time. */
  private async configuration(): Promise<Result<oidc.Configuration, SignInError>> {
    const { OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: secret } = this.config;
    if (issuer === undefined || clientId === undefined || secret === undefined) return err('oidc_disabled');
    this.discovered ??= oidc.discovery(new URL(issuer), clientId, secret, undefined, {
      timeout: DISCOVERY_TIMEOUT_SECONDS,
      execute: [
        // The id token's signature is checked against the issuer's keys too: OIDC Core lets TLS
        // to the token endpoint stand in for it, but an http issuer has no TLS, and a signature
        // is what a token copied from elsewhere cannot forge.
        oidc.enableNonRepudiationChecks,
        // Plain http only for an http issuer: the emulator in the demo and the tests.
        ...(issuer.startsWith('http://') ? [oidc.allowInsecureRequests] : []),
      ],
    });
    try {
      return ok(await this.discovered);
    } catch (error) {
      this.discovered = undefined;
      this.logger.warn({ issuer, reason: describe(error) }, 'OpenID Connect discovery failed');
      return err('provider_unavailable');
    }
  }

  private redirectUri(): string {
    return `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${OIDC_CALLBACK_PATH}`;
  }

  /** The sign-in page naming the error; logged with the reason (never a token, code or state). */
  private failed(code: SignInError, step: 'start' | 'callback', reason?: string): string {
    this.logger.warn(
      { step, code, ...(reason === undefined ? {} : { reason }) },
      'OpenID Connect sign-in refused',
    );
    return `/sign-in?error=${code}`;
  }
}

/** The callback's query as the provider sent it, every parameter kept for the code exchange. */
function searchParamsOf(query: OidcCallbackQuery): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one === 'string') params.append(name, one);
    }
  }
  return params;
}

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** fetch's own failures (refused, reset, timed out), as opposed to an answer that failed a check. */
function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    (error.name === 'TypeError' && error.message === 'fetch failed') ||
    error.name === 'TimeoutError' ||
    error.name === 'AbortError'
  );
}

/** An error's class, code, message and cause's message: what went wrong, never a token. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code, error: oauthError } = error as { code?: unknown; error?: unknown };
  return [
    error.name,
    typeof code === 'string' ? code : undefined,
    typeof oauthError === 'string' ? oauthError : undefined,
    error.message,
    error.cause instanceof Error ? error.cause.message : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(': ');
}
