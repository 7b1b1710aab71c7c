import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { accountChooserPage, CONSENT_PATH, consentPage } from './consent.pages';
import { setRequestAccount } from './data-plane.hooks';
import { googleErrors } from './google-errors';
import { GOOGLE_ISSUER, jwkCerts, pemCerts } from './google-id-token';
import type { GoogleStateRef } from './google-state';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  type CodeChallengeMethod,
  type CodeSignIn,
  DEFAULT_SCOPE,
} from './oauth-grants.store';
import { discoveryDocument, ID_TOKEN_FLAWS, isSignIn, issuerOf, signIdToken } from './openid-connect';
import type { GoogleUser } from './user.store';

type Form = Record<string, string | undefined>;

const oauthError = (reply: FastifyReply, status: number, error: string, description: string) =>
  reply.code(status).send({ error, error_description: description });

/**
 * Google's OAuth endpoints as googleapis and google-auth-library call them: the consent
 * redirect, /token (authorization_code and refresh_token grants), /revoke, the certs that
 * verify the emulator's id tokens, and userinfo. For a sign-in, an OpenID Connect provider
 * besides: discovery, the account chooser and consent page, nonce and PKCE.
 */
export function registerOAuthRoutes(app: FastifyInstance, ctx: EmulatorContext, state: GoogleStateRef): void {
  app.get('/.well-known/openid-configuration', async (req) => discoveryDocument(issuerOf(req)));

  // A data connect (and any call with login_hint) gets its code as soon as the account is
  // known, as the connector tests expect; a sign-in goes through the consent page first.
  const authorize = async (req: FastifyRequest, reply: FastifyReply) => {
    const request = readAuthorizeRequest(req.query as Form, state);
    if (!request.ok) return request.refuse(reply);
    const { params, email } = request;
    const path = req.url.split('?')[0] ?? '/o/oauth2/v2/auth';
    if (isSignIn(request.scope) && (!email || params.get('prompt') === 'consent')) {
      if (!email) return reply.type('text/html').send(chooser(CONSENT_PATH, params));
      return reply.type('text/html').send(consentPage(email, params));
    }
    if (!email) return reply.type('text/html').send(chooser(path, params));
    return approve(reply, request, email);
  };
  app.get('/o/oauth2/v2/auth', authorize);
  app.get('/o/oauth2/auth', authorize);

  const chooser = (action: string, params: URLSearchParams) =>
    accountChooserPage(
      action,
      params,
      state.current.users.all().map((u) => u.email),
    );

  app.get(CONSENT_PATH, async (req, reply) => {
    const request = readAuthorizeRequest(req.query as Form, state);
    if (!request.ok) return request.refuse(reply);
    if (!request.email) return reply.type('text/html').send(chooser(CONSENT_PATH, request.params));
    return reply.type('text/html').send(consentPage(request.email, request.params));
  });
  app.post(CONSENT_PATH, async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    const request = readAuthorizeRequest(form, state);
    if (!request.ok) return request.refuse(reply);
    if (!request.email || (form.decision !== 'allow' && form.decision !== 'deny')) {
      return htmlError(reply, 400, 'invalid_request', 'Choose an account, then Allow or Deny.');
    }
    if (form.decision === 'deny') {
      return redirectTo(reply, request, { error: 'access_denied' });
    }
    return approve(reply, request, request.email);
  });

  const approve = (reply: FastifyReply, request: AuthorizeRequest, email: string) => {
    // Signing in as someone new creates them, so a demo can connect any address.
    const { user } = state.current.users.upsert(email, {});
    const code = state.current.grants.createCode(
      user.email,
      request.redirectUri,
      request.scope,
      request.params.get('access_type') === 'offline',
      request.sign,
    );
    return redirectTo(reply, request, {
      code,
      scope: request.scope,
      authuser: '0',
      prompt: 'consent',
    });
  };

  const token = async (req: FastifyRequest, reply: FastifyReply) => {
    const form = { ...(req.query as Form), ...((req.body ?? {}) as Form) };
    const { grants, users } = state.current;
    const [clientId, clientSecret] = clientCredentials(req, form);
    if (form.grant_type === 'refresh_token') {
      const email = form.refresh_token ? grants.emailOfRefreshToken(form.refresh_token) : undefined;
      if (email) setRequestAccount(req, email);
      if (!grants.checkClient(clientId, clientSecret))
        return oauthError(reply, 401, 'invalid_client', 'Unauthorized');
      if (email && ctx.faults.take('google', 'revoke-token', email)) grants.revokeAll(email);
      const refreshed = form.refresh_token ? grants.refresh(form.refresh_token) : undefined;
      if (!refreshed) return oauthError(reply, 400, 'invalid_grant', 'Token has been expired or revoked.');
      return {
        access_token: refreshed.accessToken,
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        scope: refreshed.scope,
        token_type: 'Bearer',
      };
    }
    if (form.grant_type === 'authorization_code') {
      const email = form.code ? grants.emailOfCode(form.code) : undefined;
      if (email) setRequestAccount(req, email);
      if (!grants.checkClient(clientId, clientSecret))
        return oauthError(reply, 401, 'invalid_client', 'Unauthorized');
      const issued = form.code
        ? grants.exchangeCode(form.code, form.redirect_uri, form.code_verifier)
        : undefined;
      if (!issued) return oauthError(reply, 400, 'invalid_grant', 'Bad Request');
      const user = users.get(issued.email);
      const wantsIdToken = issued.scope
        .split(' ')
        .some((s) => s === 'openid' || s === 'email' || s.endsWith('/userinfo.email'));
      const idToken = (user: GoogleUser) =>
        signIdToken({
          issuer: isSignIn(issued.scope) ? issuerOf(req) : GOOGLE_ISSUER,
          clientId: grants.client.clientId,
          user,
          scope: issued.scope,
          accessToken: issued.accessToken,
          ...(issued.nonce === undefined ? {} : { nonce: issued.nonce }),
          nowSeconds: Math.floor(Date.now() / 1000),
          lifetimeSeconds: ACCESS_TOKEN_TTL_SECONDS,
          flaw: ID_TOKEN_FLAWS.find((kind) => ctx.faults.take('google', kind, issued.email)),
        });
      return {
        access_token: issued.accessToken,
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
        scope: issued.scope,
        token_type: 'Bearer',
        ...(wantsIdToken && user ? { id_token: idToken(user) } : {}),
      };
    }
    return oauthError(reply, 400, 'unsupported_grant_type', `Invalid grant_type: ${form.grant_type ?? ''}`);
  };
  app.post('/token', token);
  app.post('/o/oauth2/token', token);

  app.post('/revoke', async (req, reply) => {
    const form = { ...(req.query as Form), ...((req.body ?? {}) as Form) };
    const revoked = form.token ? state.current.grants.revoke(form.token) : false;
    if (!revoked) return oauthError(reply, 400, 'invalid_token', 'Token expired or revoked');
    return {};
  });

  app.get('/oauth2/v1/certs', async (_req, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').send(pemCerts()),
  );
  app.get('/oauth2/v3/certs', async (_req, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').send(jwkCerts()),
  );

  // Google's userinfo names the address only to a token granted the email scope; openid
  // alone gives the subject id. v2 spells the fields `id` / `verified_email`, v3 (OpenID
  // Connect) `sub` / `email_verified`.
  const userinfo = (version: 'v2' | 'v3') => async (req: FastifyRequest) => {
    const header = req.headers.authorization ?? '';
    const auth = state.current.grants.authenticate(header.replace(/^Bearer\s+/i, ''));
    if (!auth.ok) throw googleErrors.authError();
    setRequestAccount(req, auth.email);
    const user = state.current.users.get(auth.email);
    const email = grantsEmail(auth.scope);
    const profile = auth.scope.split(' ').includes('profile') && user ? { name: user.name } : {};
    const verified = user?.emailVerified ?? true;
    if (version === 'v2') {
      return { id: user?.sub, ...(email ? { email: auth.email, verified_email: verified } : {}), ...profile };
    }
    return { sub: user?.sub, ...(email ? { email: auth.email, email_verified: verified } : {}), ...profile };
  };
  app.get('/oauth2/v3/userinfo', userinfo('v3'));
  app.get('/oauth2/v2/userinfo', userinfo('v2'));
}

/** Whether a grant's scope lets userinfo name the address. */
const grantsEmail = (scope: string): boolean =>
  scope.split(' ').some((s) => s === 'email' || s === 'https://www.googleapis.com/auth/userinfo.email');

/** client_secret_post (google-auth-library's default) or HTTP Basic. */
function clientCredentials(req: FastifyRequest, form: Form): [string | undefined, string | undefined] {
  const basic = req.headers.authorization?.match(/^Basic\s+(.+)$/i)?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString();
    const colon = decoded.indexOf(':');
    return [decodeURIComponent(decoded.slice(0, colon)), decodeURIComponent(decoded.slice(colon + 1))];
  }
  return [form.client_id, form.client_secret];
}

/** An authorize request as the authorize endpoint and the consent page read it. */
interface AuthorizeRequest {
  ok: true;
  redirectUri: string;
  scope: string;
  email: string | undefined;
  sign: CodeSignIn;
  /** Every parameter as sent, carried through the chooser and the consent form. */
  params: URLSearchParams;
}

type AuthorizeRefusal = { ok: false; refuse: (reply: FastifyReply) => FastifyReply };

/**
 * The client and redirect URI are checked before anything is sent back to the redirect URI
 * (a bad one gets an error page); a bad PKCE method goes back to the client as invalid_request.
 */
function readAuthorizeRequest(q: Form, state: GoogleStateRef): AuthorizeRequest | AuthorizeRefusal {
  const refuse = (status: number, error: string, description: string): AuthorizeRefusal => ({
    ok: false,
    refuse: (reply) => htmlError(reply, status, error, description),
  });
  if (q.client_id !== state.current.grants.client.clientId) {
    return refuse(401, 'invalid_client', 'The OAuth client was not found.');
  }
  if (!q.redirect_uri) return refuse(400, 'invalid_request', 'Missing redirect_uri.');
  if (q.response_type !== undefined && q.response_type !== 'code') {
    return refuse(400, 'unsupported_response_type', 'Only the code flow is supported.');
  }
  const params = new URLSearchParams(
    Object.entries(q).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  params.delete('decision');
  const redirectUri = q.redirect_uri;
  const method = challengeMethod(q.code_challenge_method);
  if (q.code_challenge !== undefined && method === undefined) {
    return {
      ok: false,
      refuse: (reply) =>
        redirectTo(
          reply,
          { redirectUri, params },
          {
            error: 'invalid_request',
            error_description: 'Unsupported code_challenge_method.',
          },
        ),
    };
  }
  return {
    ok: true,
    redirectUri,
    scope: q.scope ?? DEFAULT_SCOPE,
    email: q.login_hint?.trim().toLowerCase() || undefined,
    sign: {
      ...(q.nonce === undefined ? {} : { nonce: q.nonce }),
      ...(q.code_challenge === undefined || method === undefined
        ? {}
        : { codeChallenge: { value: q.code_challenge, method } }),
    },
    params,
  };
}

/** RFC 7636 §4.3: `plain` when absent. */
function challengeMethod(sent: string | undefined): CodeChallengeMethod | undefined {
  if (sent === undefined) return 'plain';
  return sent === 'S256' || sent === 'plain' ? sent : undefined;
}

/** Back to the client's redirect URI with these parameters and the request's state. */
function redirectTo(
  reply: FastifyReply,
  request: Pick<AuthorizeRequest, 'redirectUri' | 'params'>,
  answer: Record<string, string>,
): FastifyReply {
  const target = new URL(request.redirectUri);
  const sentState = request.params.get('state');
  if (sentState !== null) target.searchParams.set('state', sentState);
  for (const [name, value] of Object.entries(answer)) target.searchParams.set(name, value);
  return reply.redirect(target.toString(), 302);
}

const htmlError = (reply: FastifyReply, status: number, error: string, description: string) =>
  reply.code(status).type('text/html').send(`<h1>Error ${status}: ${error}</h1><p>${description}</p>`);
