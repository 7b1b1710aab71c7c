import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { answerEdit } from './records.controller';
import {
  type AcceptedEditView,
  acceptedEdit,
  type ConflictPage,
  type ConflictQuery,
  type ConflictView,
  conflictPage,
  conflictQuery,
  conflictView,
  type RecordView,
  type ResolveBody,
  recordView,
  resolveBody,
} from './records.schemas';
import { RecordsService } from './records.service';

/**
 * The conflicts inbox: fields edited in two places without either seeing the other, with
 * every candidate value, its source and time. Open ones (the `manual` policy) wait for a
 * person; settling one is an edit like any other and reaches every connected system.
 */
@ApiTags('conflicts')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/conflicts')
export class ConflictsController {
  constructor(@Inject(RecordsService) private readonly records: RecordsService) {}

  @ApiOkResponse({ standardSchema: conflictPage, description: 'Newest first.' })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: conflictQuery }) query: ConflictQuery,
  ): Promise<ConflictPage> {
    return this.records.conflicts(principal, query);
  }

  @ApiOkResponse({ standardSchema: conflictView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConflictView> {
    return this.records.conflict(principal, id);
  }

  @ApiOkResponse({ standardSchema: recordView, description: 'Settled; the record after the decision.' })
  @ApiAcceptedResponse({ standardSchema: acceptedEdit, description: 'Accepted, not merged within 3 s.' })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.CONFLICT)
  @HttpCode(HttpStatus.OK)
  @Post(':id/resolve')
  async resolve(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Body({ schema: resolveBody }) body: ResolveBody,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RecordView | AcceptedEditView> {
    return answerEdit(reply, await this.records.resolve(principal, id, body.value));
  }
}
