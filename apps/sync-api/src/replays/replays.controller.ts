import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import {
  type CreateReplayBody,
  createReplayBody,
  type ReplayListQuery,
  type ReplayPage,
  type ReplayView,
  replayListQuery,
  replayPage,
  replayRunningBody,
  replayView,
} from './replays.schemas';
import { ReplaysService } from './replays.service';

/** Rebuilding the workspace's unified records from the change log (after a policy change, say). */
@ApiTags('replays')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/replays')
export class ReplaysController {
  constructor(@Inject(ReplaysService) private readonly replays: ReplaysService) {}

  @ApiResponse({
    status: HttpStatus.ACCEPTED,
    description:
      'Queued (`status: queued`); the workers run it. The records it selects are rebuilt from the change log by ' +
      'the sync stage itself under the policies in force now, then compared with what stands: `preview` writes ' +
      'nothing anywhere; `apply` replaces the records (what the sync stage has merged so far, in one transaction ' +
      'that the live sync of this workspace waits for) and owes the connected systems the final values. Audited.',
    standardSchema: replayView,
  })
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description:
      '`replay_running`: a replay of this workspace is queued or running; one runs at a time. `replayId` names it.',
    standardSchema: replayRunningBody,
  })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: '`unavailable`: the job could not be queued (Redis away); nothing was started.',
    standardSchema: apiErrorBody,
  })
  @HttpCode(HttpStatus.ACCEPTED)
  @Post()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: createReplayBody }) body: CreateReplayBody,
  ): Promise<ReplayView> {
    return this.replays.create(principal, body);
  }

  @ApiOkResponse({ description: "The workspace's replays, newest first.", standardSchema: replayPage })
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: replayListQuery }) query: ReplayListQuery,
  ): Promise<ReplayPage> {
    return this.replays.list(principal, query);
  }

  @ApiOkResponse({
    description: 'The replay: status, progress (events folded of the total) and, once succeeded, its report.',
    standardSchema: replayView,
  })
  @ApiErrorResponses(HttpStatus.NOT_FOUND)
  @Get(':id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ReplayView> {
    return this.replays.get(principal, id);
  }
}
