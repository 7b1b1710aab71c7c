import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  HttpStatus,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { CodedHttpException } from '../common/api-errors';
import { tagRequestLog } from '../infra/logger-params';
import { IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';
import { AuthFailureLimiter } from './auth-failure-limiter';
import type { Role } from './principal';
import { RequestLimiter } from './request-limiter';

/**
 * Global guard: every route needs `Authorization: Bearer sk_…` unless marked @Public().
 * A missing, malformed, unknown or revoked key is a 401; a client address past its allowance
 * of failed authentications, or a key past its request allowance, a 429 with `Retry-After`;
 * a key without the route's role a 403.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    private readonly limiter: RequestLimiter,
    private readonly failures: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const refused = this.failures.refused(request.ip);
    if (refused !== null) throw this.tooManyFailures(context, refused);
    const principal = await this.apiKeys.authenticate(request.headers.authorization);
    if (!principal) {
      // A request that presents no key guesses none: only a refused key counts.
      const wait =
        request.headers.authorization === undefined ? null : await this.failures.failed(request.ip);
      if (wait !== null) throw this.tooManyFailures(context, wait);
      throw new UnauthorizedException('a valid API key is required: Authorization: Bearer sk_…');
    }
    request.principal = principal;
    // Every later log line of this request carries the tenant and the key.
    tagRequestLog(request.raw, { workspaceId: principal.workspaceId, apiKeyId: principal.apiKeyId });

    const wait = await this.limiter.take(principal.apiKeyId);
    if (wait !== null) {
      context.switchToHttp().getResponse<FastifyReply>().header('retry-after', String(wait));
      throw new CodedHttpException(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limited',
        `more than ${this.limiter.points} requests in 10 s with this key; retry in ${wait} s`,
      );
    }

    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(principal.role)) {
      throw new ForbiddenException(`this action needs the ${roles.join(' or ')} role`);
    }
    return true;
  }

  private tooManyFailures(context: ExecutionContext, wait: number): CodedHttpException {
    context.switchToHttp().getResponse<FastifyReply>().header('retry-after', String(wait));
    return new CodedHttpException(
      HttpStatus.TOO_MANY_REQUESTS,
      'rate_limited',
      `more than ${this.failures.allowance} failed authentications in a minute from this address; retry in ${wait} s`,
    );
  }
}
