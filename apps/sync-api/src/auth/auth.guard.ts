import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  HttpStatus,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { tagRequestLog } from '../infra/logger-params';
import { actorRef } from './actor-ref';
import { IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';
import { AuthFailureLimiter } from './auth-failure-limiter';
import type { Principal, Role } from './principal';
import { RequestLimiter } from './request-limiter';
import { publicOrigin } from './sessions/session-cookie';
import { type LiveSession, SessionsService } from './sessions/sessions.service';

/** Methods that change nothing: a cookie may make them without a CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER = 'x-csrf-token';

/**
 * Global guard: every route needs `Authorization: Bearer sk_…` or the session cookie unless
 * marked @Public(); both yield the same Principal, whose actor is the key or the member.
 *
 * | case | answer |
 * |---|---|
 * | no key, no cookie; an unknown, revoked or expired one; a removed member | 401 |
 * | the client address past its allowance of failed authentications | 429 + `Retry-After` |
 * | the actor past its request allowance | 429 + `Retry-After` |
 * | a cookie write without the session's `X-CSRF-Token`, or from another `Origin` | 403 `csrf_failed` |
 * | an actor without the route's role | 403 |
 *
 * A Bearer header wins over a cookie. Sessions are read from PostgreSQL on every request.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly origin: string;

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    private readonly sessions: SessionsService,
    private readonly limiter: RequestLimiter,
    private readonly failures: AuthFailureLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.origin = publicOrigin(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const refused = this.failures.refused(request.ip);
    if (refused !== null) throw this.tooManyFailures(reply, refused);

    const principal = await this.authenticate(request, reply);
    request.principal = principal;
    // Every later log line of this request carries the tenant and the actor.
    tagRequestLog(request.raw, {
      workspaceId: principal.workspaceId,
      ...(principal.actor.kind === 'apiKey'
        ? { apiKeyId: principal.actor.id }
        : { memberId: principal.actor.id }),
    });

    const wait = await this.limiter.take(actorRef(principal.actor));
    if (wait !== null) {
      reply.header('retry-after', String(wait));
      throw new CodedHttpException(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limited',
        `more than ${this.limiter.points} requests in 10 s ${principal.actor.kind === 'apiKey' ? 'with this key' : 'in this session'}; retry in ${wait} s`,
      );
    }

    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(principal.role)) {
      throw new ForbiddenException(`this action needs the ${roles.join(' or ')} role`);
    }
    return true;
  }

  private async authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const principal = await this.apiKeys.authenticate(authorization);
      if (principal) return principal;
      throw await this.failed(request, reply, 'a valid API key is required: Authorization: Bearer sk_…');
    }
    if (!this.sessions.presented(request)) {
      // A request that presents nothing guesses nothing: only a refused credential counts.
      throw new UnauthorizedException('sign in, or send an API key: Authorization: Bearer sk_…');
    }
    const session = await this.sessions.authenticate(request);
    if (!session) {
      this.sessions.clearCookie(reply);
      throw await this.failed(request, reply, 'the session has ended; sign in again');
    }
    if (!SAFE_METHODS.has(request.method)) this.checkCsrf(request, session);
    return {
      workspaceId: session.workspaceId,
      role: session.role,
      actor: { kind: 'member', id: session.memberId },
      sessionId: session.id,
    };
  }

  /** A write made with the cookie must come from the app's own pages: its origin and its session's token. */
  private checkCsrf(request: FastifyRequest, session: LiveSession): void {
    const origin = request.headers.origin;
    if (origin !== this.origin) {
      throw new CodedHttpException(
        HttpStatus.FORBIDDEN,
        'csrf_failed',
        `a write with the session cookie must come from ${this.origin} (Origin header)`,
      );
    }
    const token = request.headers[CSRF_HEADER];
    if (!this.sessions.csrfTokenMatches(session, typeof token === 'string' ? token : undefined)) {
      throw new CodedHttpException(
        HttpStatus.FORBIDDEN,
        'csrf_failed',
        'a write with the session cookie needs the X-CSRF-Token of GET /api/v1/auth/session',
      );
    }
  }

  private async failed(request: FastifyRequest, reply: FastifyReply, message: string): Promise<Error> {
    const wait = await this.failures.failed(request.ip);
    if (wait !== null) return this.tooManyFailures(reply, wait);
    return new UnauthorizedException(message);
  }

  private tooManyFailures(reply: FastifyReply, wait: number): CodedHttpException {
    reply.header('retry-after', String(wait));
    return new CodedHttpException(
      HttpStatus.TOO_MANY_REQUESTS,
      'rate_limited',
      `more than ${this.failures.allowance} failed authentications in a minute from this address; retry in ${wait} s`,
    );
  }
}
