import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  type ApiKeyView,
  apiKeyListView,
  type CreateApiKeyBody,
  type CreatedApiKeyView,
  createApiKeyBody,
  createdApiKeyView,
} from './api-keys.schemas';
import { ApiKeysService } from './api-keys.service';

@ApiTags('api-keys')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @ApiCreatedResponse({
    description: 'The new key; `key` is shown only here.',
    standardSchema: createdApiKeyView,
  })
  @Post()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: createApiKeyBody }) body: CreateApiKeyBody,
  ): Promise<CreatedApiKeyView> {
    return this.apiKeys.create(principal, body);
  }

  @ApiOkResponse({
    description: "The workspace's keys, revoked ones included, without secrets.",
    standardSchema: apiKeyListView,
  })
  @Get()
  list(@CurrentPrincipal() principal: Principal): Promise<{ data: ApiKeyView[] }> {
    return this.apiKeys.list(principal);
  }

  @ApiNoContentResponse({ description: 'Revoked (revoking again is a no-op).' })
  @ApiErrorResponses(HttpStatus.NOT_FOUND)
  @HttpCode(HttpStatus.NO_CONTENT)
  @Delete(':id')
  revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<void> {
    return this.apiKeys.revoke(principal, id);
  }
}
