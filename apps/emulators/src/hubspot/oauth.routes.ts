import type { FastifyInstance } from 'fastify';
import { HubspotHttpError, notFoundError } from './errors';
import type { HubspotState } from './hubspot-state';
import type { Portal } from './portal';
import { ACCESS_TOKEN_TTL_SECONDS, DEFAULT_SCOPES, type Grant } from './token-store';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/**
 * "Choose an account": every portal the app's client may be installed into, each a link that
 * repeats the authorize request with its `portalId`; Cancel sends the browser back with
 * `error=access_denied`, as HubSpot does when the user declines.
 */
function accountChooserPage(query: AuthorizeQuery, portals: Portal[]): string {
  const params = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  const choice = (portal: Portal) => {
    const chosen = new URLSearchParams(params);
    chosen.set('portalId', String(portal.portalId));
    const owner = portal.owners[0]?.email;
    return `<li><a href="/oauth/authorize?${escapeHtml(chosen.toString())}">Account ${portal.portalId}</a>${owner ? ` <span>(${escapeHtml(owner)})</span>` : ''}</li>`;
  };
  const cancel = new URL(String(query.redirect_uri));
  cancel.searchParams.set('error', 'access_denied');
  cancel.searchParams.set('error_description', 'The user declined to install the app.');
  if (query.state !== undefined) cancel.searchParams.set('state', query.state);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Choose an account - HubSpot (emulator)</title></head><body><main>
<h1>Choose an account</h1>
<p>Syncline wants to connect to one of your HubSpot accounts.</p>
<ul aria-label="Your accounts">${portals.map(choice).join('')}</ul>
<p><a href="${escapeHtml(cancel.toString())}">Cancel</a></p>
</main></body></html>`;
}

/** HubSpot's OAuth errors put the error code in `status` (`BAD_REFRESH_TOKEN`, …). */
const oauthError = (status: string, message: string): HubspotHttpError =>
  new HubspotHttpError(400, { status, message, category: 'VALIDATION_ERROR' });

type TokenForm = {
  grant_type?: string;
  client_id?: string;
  client_secret?: string;
  redirect_uri?: string;
  code?: string;
  refresh_token?: string;
};

type AuthorizeQuery = {
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  optional_scope?: string;
  state?: string;
  /** An emulator extension: which portal "the user" picks when the app is in several. */
  portalId?: string;
};

/**
 * OAuth: an authorize step that approves at once and redirects with a code (so a demo can
 * run the connect flow), the token endpoint for both grants, and token introspection.
 */
export function registerOauthRoutes(app: FastifyInstance, state: HubspotState): void {
  const { ctx } = state;

  app.get<{ Querystring: AuthorizeQuery }>('/oauth/authorize', async (req, reply) => {
    const { client_id: clientId, redirect_uri: redirectUri } = req.query;
    // As HubSpot: the user first picks the account to install into (the emulator's `portalId`
    // is that pick; a script may pass it at once).
    if (req.query.portalId === undefined && clientId !== undefined && redirectUri !== undefined) {
      const portals = [...state.portals.values()].filter((p) => p.settings.clientId === clientId);
      if (portals.length === 0) throw oauthError('BAD_CLIENT_ID', 'missing or unknown client id');
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(accountChooserPage(req.query, portals));
    }
    const portal =
      clientId === undefined
        ? undefined
        : state.portalForClient(
            clientId,
            req.query.portalId === undefined ? undefined : Number(req.query.portalId),
          );
    if (!portal || !redirectUri) throw oauthError('BAD_CLIENT_ID', 'missing or unknown client id');
    req.hubspotAccount = String(portal.portalId);
    const scopes = `${req.query.scope ?? ''} ${req.query.optional_scope ?? ''}`
      .split(/[\s+]+/)
      .filter(Boolean);
    const grant: Grant = {
      portalId: portal.portalId,
      appId: portal.settings.appId,
      clientId: portal.settings.clientId,
      userId: portal.owners[0]?.userId ?? 0,
      scopes: scopes.length > 0 ? scopes : DEFAULT_SCOPES,
    };
    const target = new URL(redirectUri);
    target.searchParams.set('code', state.tokens.issueCode(grant, redirectUri, ctx.now()));
    if (req.query.state !== undefined) target.searchParams.set('state', req.query.state);
    return reply.redirect(target.toString(), 302);
  });

  app.post<{ Body: TokenForm }>('/oauth/v1/token', async (req) => {
    const form = req.body ?? {};
    const now = ctx.now();
    let grant: Grant;
    let refreshToken: string;
    if (form.grant_type === 'authorization_code') {
      const redeemed = state.tokens.redeemCode(form.code, form.client_id, form.redirect_uri, now);
      if (!redeemed) throw oauthError('BAD_AUTH_CODE', 'missing or unknown auth code');
      req.hubspotAccount = String(redeemed.portalId);
      checkClient(state, redeemed, form);
      grant = redeemed;
      refreshToken = state.tokens.issueRefresh(grant).token;
    } else if (form.grant_type === 'refresh_token') {
      const portalId = state.tokens.portalOfRefresh(form.refresh_token);
      if (portalId !== undefined) {
        req.hubspotAccount = String(portalId);
        if (ctx.faults.take('hubspot', 'revoke-token', portalId)) state.tokens.revokePortal(portalId);
      }
      const refresh = state.tokens.findRefresh(form.refresh_token);
      if (!refresh) throw oauthError('BAD_REFRESH_TOKEN', 'missing or invalid refresh token');
      checkClient(state, refresh, form);
      grant = refresh;
      refreshToken = refresh.token;
    } else {
      throw oauthError('BAD_GRANT_TYPE', `unsupported grant_type: ${String(form.grant_type)}`);
    }
    const access = state.tokens.issueAccess(grant, now);
    return {
      token_type: 'bearer',
      refresh_token: refreshToken,
      access_token: access.token,
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      token_use: 'access_token',
      hub_id: grant.portalId,
      user_id: grant.userId,
      scopes: grant.scopes,
    };
  });

  app.get<{ Params: { token: string } }>('/oauth/v1/access-tokens/:token', async (req) => {
    const token = state.tokens.findAccess(req.params.token);
    const now = ctx.now();
    if (!token || token.revoked || token.expiresAt <= now) throw notFoundError('token not found or expired');
    req.hubspotAccount = String(token.portalId);
    const owner = state.portals.get(token.portalId)?.owners.find((o) => o.userId === token.userId);
    return {
      token: token.token,
      user: owner?.email ?? '',
      hub_domain: `portal-${token.portalId}.example.test`,
      scopes: token.scopes,
      hub_id: token.portalId,
      app_id: token.appId,
      expires_in: Math.floor((token.expiresAt - now) / 1000),
      user_id: token.userId,
      token_type: 'access',
    };
  });

  app.get<{ Params: { token: string } }>('/oauth/v1/refresh-tokens/:token', async (req) => {
    const token = state.tokens.findRefresh(req.params.token);
    if (!token) throw notFoundError('refresh token not found');
    req.hubspotAccount = String(token.portalId);
    const owner = state.portals.get(token.portalId)?.owners.find((o) => o.userId === token.userId);
    return {
      token: token.token,
      user: owner?.email ?? '',
      hub_domain: `portal-${token.portalId}.example.test`,
      scopes: token.scopes,
      hub_id: token.portalId,
      client_id: token.clientId,
      user_id: token.userId,
      token_type: 'refresh',
    };
  });

  app.delete<{ Params: { token: string } }>('/oauth/v1/refresh-tokens/:token', async (req, reply) => {
    const portalId = state.tokens.portalOfRefresh(req.params.token);
    if (portalId !== undefined) req.hubspotAccount = String(portalId);
    state.tokens.revokeRefresh(req.params.token);
    return reply.code(204).send();
  });
}

function checkClient(state: HubspotState, grant: Grant, form: TokenForm): void {
  if (form.client_id !== grant.clientId) throw oauthError('BAD_CLIENT_ID', 'missing or unknown client id');
  const portal = state.portals.get(grant.portalId);
  if (!portal || form.client_secret !== portal.settings.clientSecret) {
    throw oauthError('BAD_CLIENT_SECRET', 'missing or invalid client secret');
  }
}
