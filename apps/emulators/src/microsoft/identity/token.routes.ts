import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import type { IssuedTokens } from '../grants.store';
import { originOf, setRequestAccount } from '../graph-auth';
import type { MicrosoftState, MicrosoftStateRef } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { MicrosoftApp } from './apps.store';
import { verifierMatches } from './authorization-codes';
import { signIdToken } from './id-token';
import {
  type Aadsts,
  aadsts,
  clientRequestId,
  refusalIds,
  stsTimestamp,
  tokenErrorBody,
} from './identity-errors';
import { beyondGrant, parseScopes, reportedScope } from './scopes';
import { parseTenant, refuseUser, sameAuthority, type Tenant } from './tenants';

type Form = Record<string, string | undefined>;

/** What a redemption yields: the tokens, for whom, and what the id token should repeat. */
interface Redeemed {
  user: MicrosoftUser;
  scopes: string[];
  tokens: IssuedTokens;
  nonce?: string;
}

type Outcome = { ok: true; redeemed: Redeemed } | { ok: false; refused: Aadsts };
const refuse = (refused: Aadsts): Outcome => ({ ok: false, refused });

/**
 * `POST /{tenant}/oauth2/v2.0/token`: the authorization_code and refresh_token grants of a
 * confidential client (client_secret_post or client_secret_basic). Refusals are 400 (401 for
 * client authentication) with the platform's body: error, AADSTS description, error_codes,
 * timestamp, trace_id, correlation_id.
 */
export function registerTokenRoute(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  app.post<{ Params: { tenant: string } }>('/:tenant/oauth2/v2.0/token', async (req, reply) => {
    // Only a form-encoded body is read: a JSON one is, to the platform, a body without parameters.
    const formEncoded = req.headers['content-type']?.startsWith('application/x-www-form-urlencoded');
    const form = (formEncoded ? (req.body ?? {}) : {}) as Form;
    const current = state.current;
    void reply.header('cache-control', 'no-store, no-cache').header('pragma', 'no-cache');
    const refused = (r: Aadsts) =>
      reply.code(r.status).send(tokenErrorBody(r, refusalIds(ctx.now(), clientRequestId(req))));
    const answer = (outcome: Outcome, client: MicrosoftApp) =>
      outcome.ok ? tokenResponse(originOf(req), client, outcome.redeemed) : refused(outcome.refused);

    const tenant = parseTenant(req.params.tenant);
    if (!tenant) return refused(aadsts.tenantNotFound(req.params.tenant));
    if (!form.grant_type) return refused(aadsts.missingParameter('grant_type'));
    if (form.grant_type !== 'authorization_code' && form.grant_type !== 'refresh_token') {
      return refused(aadsts.unsupportedGrantType(form.grant_type));
    }
    const userId = userOf(form, current);
    const user = userId === undefined ? undefined : current.users.get(userId);
    if (user) setRequestAccount(req, user.userPrincipalName);
    const client = authenticateClient(req, form, current, req.params.tenant);
    if ('refused' in client) return refused(client.refused);

    if (form.grant_type === 'authorization_code')
      return answer(redeemCode(form, tenant, client, current), client);
    if (user && ctx.faults.take('microsoft', 'revoke-token', user.userPrincipalName)) {
      current.grants.fail(user.id, 'revoked');
    }
    return answer(redeemRefreshToken(form, tenant, client, current), client);
  });
}

/** The user a code or refresh token stands for, known before the client is checked (for the log). */
function userOf(form: Form, state: MicrosoftState): string | undefined {
  if (form.grant_type === 'authorization_code' && form.code) {
    const found = state.codes.find(form.code);
    return found.ok ? found.grant.userId : undefined;
  }
  return form.refresh_token ? state.grants.holderOf(form.refresh_token)?.userId : undefined;
}

/** client_secret_post, or HTTP Basic (client_secret_basic). */
function authenticateClient(
  req: FastifyRequest,
  form: Form,
  state: MicrosoftState,
  segment: string,
): MicrosoftApp | { refused: Aadsts } {
  let [clientId, secret] = [form.client_id, form.client_secret];
  const basic = req.headers.authorization?.match(/^Basic\s+(.+)$/i)?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString();
    const colon = decoded.indexOf(':');
    clientId = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
  }
  if (!clientId) return { refused: aadsts.missingParameter('client_id') };
  const app = state.apps.get(clientId);
  if (!app) return { refused: aadsts.appNotFound(clientId, segment) };
  if (!secret) return { refused: aadsts.missingSecret() };
  if (!state.apps.authenticates(clientId, secret)) return { refused: aadsts.wrongSecret(clientId) };
  return app;
}

function redeemCode(form: Form, tenant: Tenant, client: MicrosoftApp, state: MicrosoftState): Outcome {
  if (!form.code) return refuse(aadsts.missingParameter('code'));
  if (!form.redirect_uri) return refuse(aadsts.missingParameter('redirect_uri'));
  const found = state.codes.find(form.code);
  if (!found.ok) {
    const failures = {
      unknown: aadsts.malformedGrant,
      redeemed: aadsts.codeRedeemed,
      expired: aadsts.codeExpired,
    } as const;
    return refuse(failures[found.failure]());
  }
  const { grant } = found;
  const user = state.users.get(grant.userId);
  if (!user || grant.clientId !== client.clientId) return refuse(aadsts.malformedGrant());
  if (!sameAuthority(grant.tenant, tenant, user)) return refuse(aadsts.codeForOtherTenant());
  if (form.redirect_uri !== grant.redirectUri) {
    return refuse(aadsts.replyAddressMismatch(form.redirect_uri, grant.redirectUri));
  }
  if (grant.challenge && !(form.code_verifier && verifierMatches(grant.challenge, form.code_verifier))) {
    return refuse(aadsts.codeVerifierMismatch());
  }
  state.codes.redeem(form.code);
  const tokens = state.grants.issue(user.id, client.clientId, grant.scopes);
  return {
    ok: true,
    redeemed: {
      user,
      scopes: grant.scopes,
      tokens,
      ...(grant.nonce === undefined ? {} : { nonce: grant.nonce }),
    },
  };
}

/** A refresh token's failures, by why its grant failed. */
const REFRESH_FAILURES = {
  revoked: () => aadsts.grantRevoked(),
  expired: (now: number) => aadsts.grantExpired(stsTimestamp(now - 90 * 86_400_000)),
  unknown: () => aadsts.malformedGrant(),
} as const;

function redeemRefreshToken(
  form: Form,
  tenant: Tenant,
  client: MicrosoftApp,
  state: MicrosoftState,
): Outcome {
  if (!form.refresh_token) return refuse(aadsts.missingParameter('refresh_token'));
  const holder = state.grants.holderOf(form.refresh_token);
  const user = holder && state.users.get(holder.userId);
  if (holder && user && holder.clientId === client.clientId) {
    const notHere = refuseUser(tenant, user, client.clientId);
    if (notHere) return refuse(notHere);
    if (beyondGrant(parseScopes(form.scope), holder.scopes).length > 0) {
      return refuse(aadsts.noConsent(client.clientId, client.displayName));
    }
  }
  const result = state.grants.redeem(form.refresh_token, client.clientId);
  if (!result.ok) {
    if (result.failure === 'no-consent') return refuse(aadsts.noConsent(client.clientId, client.displayName));
    return refuse(REFRESH_FAILURES[result.failure](state.ctx.now()));
  }
  if (!holder || !user) return refuse(aadsts.malformedGrant());
  return { ok: true, redeemed: { user, scopes: holder.scopes, tokens: result.tokens } };
}

/**
 * The success body, in the platform's order. A refresh token only for a grant with
 * offline_access, an id token only for one with openid.
 */
function tokenResponse(origin: string, client: MicrosoftApp, redeemed: Redeemed) {
  const { user, scopes, tokens } = redeemed;
  return {
    token_type: 'Bearer',
    scope: reportedScope(scopes),
    expires_in: tokens.expiresIn,
    ext_expires_in: tokens.expiresIn,
    access_token: tokens.accessToken,
    ...(scopes.includes('offline_access') ? { refresh_token: tokens.refreshToken } : {}),
    ...(scopes.includes('openid')
      ? {
          id_token: signIdToken({
            origin,
            clientId: client.clientId,
            user,
            scopes,
            ...(redeemed.nonce === undefined ? {} : { nonce: redeemed.nonce }),
            nowSeconds: Math.floor(Date.now() / 1000),
          }),
        }
      : {}),
  };
}
