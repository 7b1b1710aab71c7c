import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { CurrentPrincipal } from './auth.decorators';
import { type Principal, ROLES } from './principal';

const principalView = z.object({ workspaceId: z.uuid(), apiKeyId: z.uuid(), role: z.enum(ROLES) });

@ApiTags('auth')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/me')
export class MeController {
  @ApiOkResponse({ description: 'The caller, as its API key identifies it.', standardSchema: principalView })
  @Get()
  me(@CurrentPrincipal() principal: Principal): Principal {
    return { workspaceId: principal.workspaceId, apiKeyId: principal.apiKeyId, role: principal.role };
  }
}
