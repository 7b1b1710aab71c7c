import { Body, Controller, Get, HttpStatus, Inject, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  type ConnectionView,
  type CreateConnectionBody,
  connectionListView,
  connectionView,
  createConnectionBody,
  type ReplaceCredentialsBody,
  replaceCredentialsBody,
} from './connections.schemas';
import { ConnectionsService } from './connections.service';

@ApiTags('connections')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/connections')
export class ConnectionsController {
  constructor(@Inject(ConnectionsService) private readonly connections: ConnectionsService) {}

  @ApiCreatedResponse({
    description: 'Connected; credentials are stored encrypted.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.CONFLICT)
  @Roles('admin')
  @Post()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: createConnectionBody }) body: CreateConnectionBody,
  ): Promise<ConnectionView> {
    return this.connections.create(principal, body);
  }

  @ApiOkResponse({ standardSchema: connectionListView })
  @Get()
  list(@CurrentPrincipal() principal: Principal): Promise<{ data: ConnectionView[] }> {
    return this.connections.list(principal);
  }

  @ApiOkResponse({ standardSchema: connectionView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConnectionView> {
    return this.connections.get(principal, id);
  }

  @ApiOkResponse({
    description:
      'Credentials replaced (sealed, never returned). A `needs_reauth` connection resumes (`live`, or ' +
      '`backfilling` / `pending` if its backfill had not finished) and a pull is queued.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @Roles('admin')
  @Put(':id/credentials')
  replaceCredentials(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Body({ schema: replaceCredentialsBody }) body: ReplaceCredentialsBody,
  ): Promise<ConnectionView> {
    return this.connections.replaceCredentials(principal, id, body);
  }
}
