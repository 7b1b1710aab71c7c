import { randomBytes } from 'node:crypto';
import {
  ForbiddenException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { actorRef, parseActorRef } from '../auth/actor-ref';
import type { Principal } from '../auth/principal';
import { SessionsService } from '../auth/sessions/sessions.service';
import { type ApiErrorCode, CodedHttpException, ValidationFailedException } from '../common/api-errors';
import { newPkce } from '../common/pkce';
import type { ConnectionView } from './connections.schemas';
import { ConnectionsService } from './connections.service';
import {
  type OAuthCallbackQuery,
  type OAuthProvider,
  productsFor,
  type StartOAuthBody,
  type StartOAuthView,
} from './oauth.schemas';
import { GoogleOAuthClient } from './oauth-google.client';
import { HubspotOAuthClient } from './oauth-hubspot.client';
import { MicrosoftOAuthClient } from './oauth-microsoft.client';
import type { OAuthFailure, OAuthProviderClient } from './oauth-provider.client';
import { type OAuthStateRecord, OAuthStateRepository } from './oauth-state.repository';

/** How long an admin has to consent after starting. */
export const OAUTH_STATE_TTL_SECONDS = 600;
/** 256 bits: a state cannot be guessed, and is all the callback needs. */
const STATE_BYTES = 32;
/** The web app's page for connections: where a signed-in browser lands from a callback whose state is gone. */
export const CONNECTIONS_PAGE = '/admin/connections';

/**
 * How a callback ends: the connections as JSON (a connect started by a script), or, when the
 * start named a `returnTo`, the app path to send the browser to with the outcome in its query.
 */
export type OAuthCallbackOutcome = { data: ConnectionView[] } | { location: string };

/**
 * The OAuth connect flow. `start` (an admin's API key) leaves a single-use state in Redis that
 * records the workspace, the key, the connections to create and the PKCE verifier behind the
 * authorize URL's challenge; the provider's redirect to `callback` carries no API key, so that
 * state is its only authority: it is taken (deleted, verifier and all) before anything else,
 * then the code is exchanged with the verifier and the connections made as the key that
 * started the flow, if it is still an active admin key.
 */
@Injectable()
export class OAuthService {
  private readonly clients: Record<OAuthProvider, OAuthProviderClient>;

  constructor(
    @Inject(HubspotOAuthClient) hubspot: HubspotOAuthClient,
    @Inject(GoogleOAuthClient) google: GoogleOAuthClient,
    @Inject(MicrosoftOAuthClient) microsoft: MicrosoftOAuthClient,
    @Inject(OAuthStateRepository) private readonly states: OAuthStateRepository,
    @Inject(ConnectionsService) private readonly connections: ConnectionsService,
    @Inject(ApiKeysService) private readonly apiKeys: ApiKeysService,
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @InjectPinoLogger(OAuthService.name) private readonly logger: PinoLogger,
  ) {
    this.clients = { hubspot, google, microsoft };
  }

  async start(
    principal: Principal,
    request: FastifyRequest,
    provider: OAuthProvider,
    body: StartOAuthBody,
  ): Promise<StartOAuthView> {
    const client = this.configured(provider);
    const products = productsFor[provider].safeParse(body.products);
    if (!products.success) {
      throw new ValidationFailedException(products.error.issues, { part: 'body', name: 'products' });
    }
    const state = randomBytes(STATE_BYTES).toString('base64url');
    const pkce = await newPkce();
    const record: OAuthStateRecord = {
      provider,
      workspaceId: principal.workspaceId,
      actor: actorRef(principal.actor),
      sessionHash: principal.sessionId === undefined ? undefined : this.sessions.tokenHashOf(request),
      products: products.data,
      returnTo: body.returnTo,
      dryRun: body.dryRun,
      codeVerifier: pkce.verifier,
    };
    const saved = await this.redis(() => this.states.save(state, record, OAUTH_STATE_TTL_SECONDS));
    if (!saved) throw new Error('a fresh OAuth state was already pending');
    this.logger.info({ provider, products: products.data, dryRun: body.dryRun }, 'oauth connect started');
    return {
      authorizeUrl: client.authorizeUrl(state, products.data, pkce.challenge),
      state,
      expiresAt: new Date(Date.now() + OAUTH_STATE_TTL_SECONDS * 1000).toISOString(),
    };
  }

  /**
   * The provider's redirect back. A state that names a `returnTo` (a browser connect) ends in a
   * redirect there whatever happens once the state is read: `connected=<ids>`, or
   * `oauthError=<code>` for every refusal; otherwise the connections are answered as JSON and
   * refusals as API errors.
   */
  async callback(
    request: FastifyRequest,
    provider: OAuthProvider,
    query: OAuthCallbackQuery,
  ): Promise<OAuthCallbackOutcome> {
    // Taken whatever happens next: a state is good for one answer from the provider.
    const record = await this.redis(() => this.states.take(query.state));
    // A state gone (used, expired) names no returnTo; a signed-in browser (a reload of the
    // callback, the back button) is still sent to the app's connections page, not shown JSON.
    const returnTo =
      record?.returnTo ??
      (record === null && this.sessions.tokenHashOf(request) !== undefined ? CONNECTIONS_PAGE : undefined);
    try {
      const data = await this.complete(record, request, provider, query);
      if (returnTo === undefined) return { data };
      return { location: returnToWith(returnTo, 'connected', data.map((c) => c.id).join(',')) };
    } catch (error) {
      if (returnTo === undefined) throw error;
      const code = refusalCode(error);
      if (code === 'internal') this.logger.error({ err: error, provider }, 'oauth connect failed');
      else this.logger.info({ provider, code }, 'oauth connect refused');
      return { location: returnToWith(returnTo, 'oauthError', code) };
    }
  }

  private async complete(
    record: OAuthStateRecord | null,
    request: FastifyRequest,
    provider: OAuthProvider,
    query: OAuthCallbackQuery,
  ): Promise<ConnectionView[]> {
    if (!record || record.provider !== provider) {
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'oauth_state_invalid',
        record
          ? `this state was issued for ${record.provider}, not ${provider}; start the connect again`
          : 'unknown, expired or already used state; start the connect again',
      );
    }
    if (record.sessionHash !== undefined && this.sessions.tokenHashOf(request) !== record.sessionHash) {
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'oauth_state_invalid',
        'this connect was started in another browser session; start it again from this one',
      );
    }
    this.logger.assign({ workspaceId: record.workspaceId, actor: record.actor });
    if (query.error !== undefined || query.code === undefined) {
      this.logger.info({ provider, providerError: query.error }, 'oauth connect ended without consent');
      if (query.error === 'access_denied') {
        throw new CodedHttpException(
          HttpStatus.FORBIDDEN,
          'oauth_consent_denied',
          'consent was denied at the provider; nothing was connected',
        );
      }
      throw new CodedHttpException(
        HttpStatus.BAD_REQUEST,
        'oauth_failed',
        `the provider ended the authorization with ${String(query.error)}; nothing was connected`,
      );
    }
    const principal = await this.startedBy(record, request);
    const account = await this.configured(provider).exchange(
      query.code,
      record.products,
      record.codeVerifier,
    );
    if (!account.ok) throw exchangeFailure(account.error);

    const data: ConnectionView[] = [];
    for (const product of record.products) {
      data.push(
        await this.connections.connectOAuth(principal, {
          provider: product,
          ...account.value,
          dryRun: record.dryRun ?? false,
        }),
      );
    }
    this.logger.info(
      { provider, connectionIds: data.map((c) => c.id), products: record.products },
      'oauth connect finished',
    );
    return data;
  }

  private configured(provider: OAuthProvider): OAuthProviderClient {
    const client = this.clients[provider];
    const missing = client.missingSettings();
    if (missing.length > 0) {
      throw new ServiceUnavailableException(`${provider} OAuth is not configured: set ${missing.join(', ')}`);
    }
    return client;
  }

  /**
   * Who started the flow, if they may still act: a member by the same session, still live and
   * an admin's; a key not revoked and still an admin key.
   */
  private async startedBy(record: OAuthStateRecord, request: FastifyRequest): Promise<Principal> {
    const actor = parseActorRef(record.actor);
    if (actor === null) throw new Error(`an OAuth state names no actor: ${record.actor}`);
    const principal: Principal = { workspaceId: record.workspaceId, role: 'admin', actor };
    if (actor.kind === 'member') {
      const session = await this.sessions.authenticate(request);
      if (!session || session.workspaceId !== record.workspaceId || session.memberId !== actor.id) {
        throw new CodedHttpException(
          HttpStatus.BAD_REQUEST,
          'oauth_state_invalid',
          'the session that started this connect has ended; sign in and start it again',
        );
      }
      if (session.role !== 'admin')
        throw new ForbiddenException('the member who started this connect is no longer an admin');
      return { ...principal, sessionId: session.id };
    }
    const { data: keys } = await this.apiKeys.list(principal);
    const key = keys.find((k) => k.id === actor.id);
    if (!key || key.revokedAt !== null || key.role !== 'admin') {
      throw new ForbiddenException('the API key that started this connect is no longer an active admin key');
    }
    return principal;
  }

  /** Redis away: a 503 the admin can retry, not a 500. */
  private async redis<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.logger.warn({ err: error }, 'oauth state store failed');
      throw new ServiceUnavailableException('cannot reach the OAuth state store right now; try again');
    }
  }
}

function exchangeFailure(failure: OAuthFailure): Error {
  switch (failure.code) {
    case 'consent_incomplete':
      return new CodedHttpException(HttpStatus.FORBIDDEN, 'oauth_consent_denied', failure.message);
    case 'refused':
      return new CodedHttpException(HttpStatus.BAD_REQUEST, 'oauth_failed', failure.message);
    case 'unavailable':
      return new ServiceUnavailableException(failure.message);
  }
}

/** `returnTo` with the outcome in its query (any earlier outcome there replaced). */
export function returnToWith(returnTo: string, param: 'connected' | 'oauthError', value: string): string {
  const url = new URL(returnTo, 'https://app.invalid');
  url.searchParams.delete('connected');
  url.searchParams.delete('oauthError');
  url.searchParams.set(param, value);
  return `${url.pathname}${url.search}${url.hash}`;
}

const CODE_BY_STATUS: Partial<Record<number, ApiErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: 'bad_request',
  [HttpStatus.FORBIDDEN]: 'forbidden',
  [HttpStatus.NOT_FOUND]: 'not_found',
  [HttpStatus.CONFLICT]: 'conflict',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'unavailable',
};

/** The code a refusal would have answered as JSON (`internal` for a bug). */
function refusalCode(error: unknown): ApiErrorCode {
  if (error instanceof ValidationFailedException) return 'validation_failed';
  if (error instanceof CodedHttpException) return error.code;
  if (error instanceof HttpException) return CODE_BY_STATUS[error.getStatus()] ?? 'internal';
  return 'internal';
}
