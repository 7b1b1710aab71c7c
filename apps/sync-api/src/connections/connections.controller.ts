import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import {
  type ConnectionView,
  type CreateConnectionBody,
  connectionListView,
  connectionView,
  createConnectionBody,
  type DisconnectQuery,
  disconnectQuery,
  type ReplaceCredentialsBody,
  replaceCredentialsBody,
} from './connections.schemas';
import { ConnectionsService } from './connections.service';

const DISCONNECTED = '`connection_disconnected`: the connection was disconnected, for good.';
const UNPROVEN =
  'Nothing was stored. `validation_failed`: the body, or credentials of another shape than the provider ' +
  "takes (unknown keys included). `account_mismatch`: the provider says the credentials open another account than the connection's. " +
  '`credentials_refused`: the provider refused them (unknown, expired or revoked tokens). `account_unproven`: ' +
  'it accepted them but would not name their account (a Google token without the email scope).';
const PROVIDER_AWAY =
  'The provider could not be asked whose account the credentials open (`unavailable`); nothing was stored.';
const NEEDS_CREDENTIALS =
  '`credentials_required`: it is `needs_reauth` (or has no credentials); replace them with `PUT /{id}/credentials` first.';

@ApiTags('connections')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/connections')
export class ConnectionsController {
  constructor(@Inject(ConnectionsService) private readonly connections: ConnectionsService) {}

  @ApiCreatedResponse({
    description:
      'Connected, once the provider named the account the credentials open as `externalAccountId` (a Google ' +
      'address is stored as Google spells it); credentials are stored encrypted.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.FORBIDDEN, HttpStatus.CONFLICT)
  @ApiResponse({ status: HttpStatus.BAD_REQUEST, description: UNPROVEN, standardSchema: apiErrorBody })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: PROVIDER_AWAY,
    standardSchema: apiErrorBody,
  })
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
      'Credentials replaced (sealed, never returned), once the provider named the account they open as the ' +
      "connection's: otherwise its credentials stay as they were. A `needs_reauth` connection resumes (`live`, or " +
      '`backfilling` / `pending` if its backfill had not finished) and a pull is queued.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @ApiResponse({ status: HttpStatus.BAD_REQUEST, description: UNPROVEN, standardSchema: apiErrorBody })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: PROVIDER_AWAY,
    standardSchema: apiErrorBody,
  })
  @ApiResponse({ status: HttpStatus.CONFLICT, description: DISCONNECTED, standardSchema: apiErrorBody })
  @Roles('admin')
  @Put(':id/credentials')
  replaceCredentials(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Body({ schema: replaceCredentialsBody }) body: ReplaceCredentialsBody,
  ): Promise<ConnectionView> {
    return this.connections.replaceCredentials(principal, id, body);
  }

  @ApiOkResponse({
    description:
      'Paused (`statusReason` "paused by an admin"); pausing a paused connection answers it as it is. The ' +
      'workers stop pulling and pushing it: its cursor stays, writes owed to it wait in the outbox, and ' +
      'webhooks for it are answered but not taken in (the pull on resume reads them from the kept cursor).',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @ApiResponse({ status: HttpStatus.CONFLICT, description: DISCONNECTED, standardSchema: apiErrorBody })
  @Roles('admin')
  @HttpCode(HttpStatus.OK)
  @Post(':id/pause')
  pause(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConnectionView> {
    return this.connections.pause(principal, id);
  }

  @ApiOkResponse({
    description:
      'A `paused` (or `error`) connection resumes where it stopped, as after new credentials: `live`, or ' +
      '`backfilling` / `pending` if its backfill had not finished. A pull is queued (also for a connection ' +
      'already running), and the writes it is owed are sent within seconds.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description: `${NEEDS_CREDENTIALS} ${DISCONNECTED}`,
    standardSchema: apiErrorBody,
  })
  @Roles('admin')
  @HttpCode(HttpStatus.OK)
  @Post(':id/resume')
  resume(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConnectionView> {
    return this.connections.resume(principal, id);
  }

  @ApiOkResponse({
    description:
      'Its cursors are dropped and a pull is queued: the connection is `backfilling` from the start, its ' +
      'progress reset. Records read again keep their event keys and links, so nothing is duplicated.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description: `\`connection_paused\`: resume it first. ${NEEDS_CREDENTIALS} ${DISCONNECTED}`,
    standardSchema: apiErrorBody,
  })
  @Roles('admin')
  @HttpCode(HttpStatus.OK)
  @Post(':id/resync')
  resync(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConnectionView> {
    return this.connections.resync(principal, id);
  }

  @ApiOkResponse({
    description:
      'Disconnected for good (`disconnected`); its credentials and watch channels are erased and nothing is ' +
      'read from or written to it again. `data=keep`: its links go and its pending writes are superseded; ' +
      'the unified records keep what it brought. `data=erase`: also its change events, dead letters and ' +
      'writes, and every record only it knew; records another connection knows stay. Disconnecting again ' +
      'answers it as it is.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description:
      '`connection_disconnected`: `data=erase` for a connection already disconnected with `data=keep` ' +
      '(its links, which told what only it knew, are gone).',
    standardSchema: apiErrorBody,
  })
  @Roles('admin')
  @Delete(':id')
  disconnect(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Query({ schema: disconnectQuery }) query: DisconnectQuery,
  ): Promise<ConnectionView> {
    return this.connections.disconnect(principal, id, query.data);
  }
}
