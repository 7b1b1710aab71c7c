import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiBearerAuth, ApiCookieAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { CurrentPrincipal } from './auth.decorators';
import { ACTOR_KINDS, type Principal, ROLES } from './principal';

const principalView = z.object({
  workspaceId: z.uuid(),
  role: z.enum(ROLES),
  actor: z
    .object({ kind: z.enum(ACTOR_KINDS), id: z.uuid() })
    .describe('The API key, or the signed-in member.'),
  apiKeyId: z.uuid().nullable().describe('The API key, when a key authenticated the request.'),
});
type PrincipalView = z.output<typeof principalView>;

@ApiTags('auth')
@ApiBearerAuth()
@ApiCookieAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/me')
export class MeController {
  @ApiOkResponse({
    description: 'The caller, as its API key or session identifies it.',
    standardSchema: principalView,
  })
  @Get()
  me(@CurrentPrincipal() principal: Principal): PrincipalView {
    return {
      workspaceId: principal.workspaceId,
      role: principal.role,
      actor: { kind: principal.actor.kind, id: principal.actor.id },
      apiKeyId: principal.actor.kind === 'apiKey' ? principal.actor.id : null,
    };
  }
}
