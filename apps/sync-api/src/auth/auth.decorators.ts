import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal, Role } from './principal';

export const IS_PUBLIC = 'syncline:public';
export const REQUIRED_ROLES = 'syncline:roles';

/** Opts a controller or route out of API-key auth (probes, metrics). Everything else needs a key. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Restricts a route to these roles; without it any authenticated role may call. */
export const Roles = (...roles: [Role, ...Role[]]) => SetMetadata(REQUIRED_ROLES, roles);

/** The authenticated caller. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const { principal } = context.switchToHttp().getRequest<FastifyRequest>();
    // Reaching a handler without one means the route was marked public by mistake.
    if (!principal) throw new Error('no principal on the request: is the route marked @Public()?');
    return principal;
  },
);
