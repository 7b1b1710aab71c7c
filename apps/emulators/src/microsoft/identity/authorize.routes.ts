import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorContext } from '../../common/context';
import { setRequestAccount } from '../graph-auth';
import type { MicrosoftStateRef } from '../microsoft-state';
import { isRegisteredRedirect, type MicrosoftApp } from './apps.store';
import type { ChallengeMethod } from './authorization-codes';
import { type Aadsts, aadsts, clientRequestId, refusalIds } from './identity-errors';
import { parseScopes } from './scopes';
import { accountPickerPage, consentPage, errorPage, formPostPage } from './sign-in.pages';
import { parseTenant, refuseUser, type Tenant } from './tenants';

type Form = Record<string, string | undefined>;
type ResponseMode = 'query' | 'fragment' | 'form_post';
type TenantParams = { Params: { tenant: string } };

/** Where the answer goes: the redirect URI, in the way the app asked for. */
interface ReplyTo {
  redirectUri: string;
  responseMode: ResponseMode;
  state: string | undefined;
}

/** An authorize request whose app and redirect URI check out. */
interface AuthorizeRequest extends ReplyTo {
  tenant: Tenant;
  app: MicrosoftApp;
  scopes: string[];
  prompt: string | undefined;
  loginHint: string | undefined;
  nonce: string | undefined;
  challenge: { value: string; method: ChallengeMethod } | undefined;
  /** Every parameter as sent, carried through the account picker and the consent form. */
  params: URLSearchParams;
}

/**
 * What to do with an authorize request. Until the app and its redirect URI are known good,
 * a refusal is a page; after, it goes back to the app (RFC 6749 §4.1.2.1).
 */
type Reading =
  | { kind: 'ok'; request: AuthorizeRequest }
  | { kind: 'page'; refused: Aadsts }
  | { kind: 'back'; to: ReplyTo; refused: Aadsts };

const RESPONSE_MODES: readonly string[] = ['query', 'fragment', 'form_post'];
/** Prompts that show the account picker even when the app names the account. */
const PICK_AGAIN = new Set(['login', 'select_account']);

/**
 * The sign-in pages: `/{tenant}/oauth2/v2.0/authorize` checks the app and its redirect URI,
 * picks the account (`login_hint`, or the picker) and shows the consent page, whose Accept
 * or Cancel (`/{tenant}/Consent/Set`) sends the browser back to the app with a code or
 * `access_denied`. No session is kept: each step carries the whole request.
 */
export function registerAuthorizeRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  state: MicrosoftStateRef,
): void {
  const page = (req: FastifyRequest, reply: FastifyReply, refused: Aadsts) =>
    reply
      .code(refused.status)
      .type('text/html')
      .send(errorPage(refused, refusalIds(ctx.now(), clientRequestId(req))));

  app.get<TenantParams>('/:tenant/oauth2/v2.0/authorize', async (req, reply) => {
    const reading = readAuthorizeRequest(req.params.tenant, req.query as Form, state);
    if (reading.kind === 'page') return page(req, reply, reading.refused);
    if (reading.kind === 'back') return answer(reply, reading.to, refusalFields(reading.refused));
    const request = reading.request;
    if (request.prompt === 'none') return answer(reply, request, refusalFields(aadsts.loginRequired()));

    const { users } = state.current;
    const hinted = request.loginHint === undefined ? undefined : users.byUpn(request.loginHint);
    const path = `/${req.params.tenant}/oauth2/v2.0/authorize`;
    const pickAgain = PICK_AGAIN.has(request.prompt ?? '');
    if (!hinted || pickAgain) {
      const params = new URLSearchParams(request.params);
      params.delete('login_hint');
      if (pickAgain) params.delete('prompt');
      const notice =
        request.loginHint !== undefined && !hinted
          ? `AADSTS50034: ${aadsts.userNotFound(request.loginHint).message}`
          : undefined;
      return reply.type('text/html').send(accountPickerPage(path, params, users.list(), notice));
    }
    setRequestAccount(req, hinted.userPrincipalName);
    const refused = refuseUser(request.tenant, hinted, request.app.clientId);
    if (refused) return page(req, reply, refused);
    const params = new URLSearchParams(request.params);
    params.set('login_hint', hinted.userPrincipalName);
    const action = `/${req.params.tenant}/Consent/Set`;
    return reply
      .type('text/html')
      .send(consentPage(action, params, hinted, request.app.displayName, request.scopes));
  });

  app.post<TenantParams>('/:tenant/Consent/Set', async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    const reading = readAuthorizeRequest(req.params.tenant, form, state);
    if (reading.kind === 'page') return page(req, reply, reading.refused);
    if (reading.kind === 'back') return answer(reply, reading.to, refusalFields(reading.refused));
    const request = reading.request;
    const user = request.loginHint ? state.current.users.byUpn(request.loginHint) : undefined;
    if (!user) return page(req, reply, aadsts.userNotFound(request.loginHint ?? ''));
    setRequestAccount(req, user.userPrincipalName);
    const refused = refuseUser(request.tenant, user, request.app.clientId);
    if (refused) return page(req, reply, refused);
    if (form.decision === 'cancel') return answer(reply, request, refusalFields(aadsts.declined()));
    if (form.decision !== 'accept') return page(req, reply, aadsts.invalidUserInput());
    const code = state.current.codes.issue({
      userId: user.id,
      clientId: request.app.clientId,
      tenant: request.tenant,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
      ...(request.challenge === undefined ? {} : { challenge: request.challenge }),
    });
    return answer(reply, request, { code });
  });
}

function readAuthorizeRequest(segment: string, q: Form, state: MicrosoftStateRef): Reading {
  const tenant = parseTenant(segment);
  if (!tenant) return { kind: 'page', refused: aadsts.tenantNotFound(segment) };
  if (!q.client_id) return { kind: 'page', refused: aadsts.missingParameter('client_id') };
  const app = state.current.apps.get(q.client_id);
  if (!app) return { kind: 'page', refused: aadsts.appNotFound(q.client_id, segment) };
  if (!q.redirect_uri) return { kind: 'page', refused: aadsts.noReplyAddress() };
  if (!isRegisteredRedirect(app, q.redirect_uri)) {
    return { kind: 'page', refused: aadsts.replyAddressNotRegistered(q.redirect_uri, app.clientId) };
  }

  const mode = q.response_mode ?? 'query';
  const to: ReplyTo = {
    redirectUri: q.redirect_uri,
    responseMode: RESPONSE_MODES.includes(mode) ? (mode as ResponseMode) : 'query',
    state: q.state,
  };
  const back = (refused: Aadsts): Reading => ({ kind: 'back', to, refused });
  if (!RESPONSE_MODES.includes(mode)) return back(aadsts.unsupportedResponseMode(mode));
  if (!q.response_type) return back(aadsts.missingParameter('response_type'));
  if (q.response_type !== 'code') return back(aadsts.unsupportedResponseType(q.response_type));
  const scopes = parseScopes(q.scope);
  if (scopes.length === 0) return back(aadsts.missingParameter('scope'));

  let challenge: AuthorizeRequest['challenge'];
  if (q.code_challenge !== undefined) {
    // RFC 7636 §4.3: plain when no method is named.
    const method = q.code_challenge_method ?? 'plain';
    if (method !== 'S256' && method !== 'plain') return back(aadsts.invalidChallengeMethod());
    if (q.code_challenge.length < 43 || q.code_challenge.length > 128)
      return back(aadsts.invalidChallengeSize());
    challenge = { value: q.code_challenge, method };
  }

  const params = new URLSearchParams(
    Object.entries(q).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  params.delete('decision');
  return {
    kind: 'ok',
    request: {
      ...to,
      tenant,
      app,
      scopes,
      prompt: q.prompt,
      loginHint: q.login_hint?.trim() || undefined,
      nonce: q.nonce,
      challenge,
      params,
    },
  };
}

const refusalFields = (refused: Aadsts) => ({
  error: refused.error,
  error_description: `AADSTS${refused.code}: ${refused.message}`,
});

/** The answer (a code, or an error) on the redirect URI, then the app's state, as the response mode says. */
function answer(reply: FastifyReply, to: ReplyTo, fields: Record<string, string>): FastifyReply {
  const params = new URLSearchParams(fields);
  if (to.state !== undefined) params.set('state', to.state);
  if (to.responseMode === 'form_post')
    return reply.type('text/html').send(formPostPage(to.redirectUri, params));
  const target = new URL(to.redirectUri);
  if (to.responseMode === 'fragment') target.hash = params.toString();
  else for (const [name, value] of params) target.searchParams.set(name, value);
  return reply.redirect(target.toString(), 302);
}
