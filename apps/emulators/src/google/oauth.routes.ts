import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../common/context';
import { setRequestAccount } from './data-plane.hooks';
import { googleErrors } from './google-errors';
import { jwkCerts, pemCerts, signGoogleIdToken } from './google-id-token';
import type { GoogleStateRef } from './google-state';
import { ACCESS_TOKEN_TTL_SECONDS, DEFAULT_SCOPE } from './oauth-grants.store';

type Form = Record<string, string | undefined>;

const oauthError = (reply: FastifyReply, status: number, error: string, description: string) =>
  reply.code(status).send({ error, error_description: description });

/**
 * Google's OAuth endpoints as googleapis and google-auth-library call them: the consent
 * redirect, /token (authorization_code and refresh_token grants), /revoke, the certs that
 * verify the emulator's id tokens, and userinfo.
 */
export function registerOAuthRoutes(app: FastifyInstance, ctx: EmulatorContext, state: GoogleStateRef): void {
  const authorize = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Form;
    const { grants, users } = state.current;
    if (q.client_id !== grants.client.clientId) {
      return reply
        .code(401)
        .type('text/html')
        .send('<h1>Error 401: invalid_client</h1><p>The OAuth client was not found.</p>');
    }
    if (!q.redirect_uri)
      return reply
        .code(400)
        .type('text/html')
        .send('<h1>Error 400: invalid_request</h1><p>Missing redirect_uri.</p>');
    if (q.response_type !== undefined && q.response_type !== 'code') {
      return reply.code(400).type('text/html').send('<h1>Error 400: unsupported_response_type</h1>');
    }
    const email = q.login_hint?.trim().toLowerCase();
    if (!email)
      return reply.type('text/html').send(
        accountChooser(
          req.url,
          users.all().map((u) => u.email),
        ),
      );
    // Signing in as someone new creates them, so a demo can connect any address.
    const { user } = users.upsert(email, {});
    const scope = q.scope ?? DEFAULT_SCOPE;
    const code = grants.createCode(user.email, q.redirect_uri, scope, q.access_type === 'offline');
    const target = new URL(q.redirect_uri);
    if (q.state !== undefined) target.searchParams.set('state', q.state);
    target.searchParams.set('code', code);
    target.searchParams.set('scope', scope);
    target.searchParams.set('authuser', '0');
    target.searchParams.set('prompt', 'consent');
    return reply.redirect(target.toString(), 302);
  };
  app.get('/o/oauth2/v2/auth', authorize);
  app.get('/o/oauth2/auth', authorize);

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
      const issued = form.code ? grants.exchangeCode(form.code, form.redirect_uri) : undefined;
      if (!issued) return oauthError(reply, 400, 'invalid_grant', 'Bad Request');
      const user = users.get(issued.email);
      const wantsIdToken = issued.scope
        .split(' ')
        .some((s) => s === 'openid' || s === 'email' || s.endsWith('/userinfo.email'));
      // Wall-clock times: whoever verifies the token checks them against their own clock.
      const iat = Math.floor(Date.now() / 1000);
      return {
        access_token: issued.accessToken,
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
        scope: issued.scope,
        token_type: 'Bearer',
        ...(wantsIdToken && user
          ? {
              id_token: signGoogleIdToken({
                azp: grants.client.clientId,
                aud: grants.client.clientId,
                sub: user.sub,
                email: user.email,
                email_verified: true,
                iat,
                exp: iat + ACCESS_TOKEN_TTL_SECONDS,
              }),
            }
          : {}),
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
    const sub = state.current.users.get(auth.email)?.sub;
    const email = grantsEmail(auth.scope);
    if (version === 'v2') return { id: sub, ...(email ? { email: auth.email, verified_email: true } : {}) };
    return { sub, ...(email ? { email: auth.email, email_verified: true } : {}) };
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

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** The consent screen: pick a known user or type any address. */
function accountChooser(url: string, emails: string[]): string {
  const base = new URL(url, 'http://emulator');
  const link = (email: string) => {
    base.searchParams.set('login_hint', email);
    return `<li><a href="${escapeHtml(base.pathname + base.search)}">${escapeHtml(email)}</a></li>`;
  };
  const hidden = [...new URL(url, 'http://emulator').searchParams.entries()]
    .filter(([k]) => k !== 'login_hint')
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return `<!doctype html><html><head><title>Sign in - Google Accounts (emulator)</title></head><body>
<h1>Choose an account</h1><ul>${emails.map(link).join('')}</ul>
<form method="get" action="${escapeHtml(base.pathname)}">${hidden}<input name="login_hint" type="email" placeholder="someone@example.com" required><button>Continue</button></form>
</body></html>`;
}
