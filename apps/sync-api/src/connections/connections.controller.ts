import { Body, Controller, Get, HttpStatus, Param, Post } from '@nestjs/common';
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
} from './connections.schemas';
import { ConnectionsService } from './connections.service';

@ApiTags('connections')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/connections')
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

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
}
