import {
  Body,
  Controller,
  Get,
  Headers,
  HttpStatus,
  Inject,
  Param,
  Patch,
  Query,
  Res,
  type Type,
} from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { header } from '../common/headers';
import {
  type AcceptedEditView,
  acceptedEdit,
  type EditBody,
  editBody,
  idempotencyKeyHeader,
  ifMatchHeader,
  type ListQuery,
  listQueries,
  RECORD_RESOURCES,
  type RecordPage,
  type RecordResource,
  type RecordView,
  recordPage,
  recordView,
} from './records.schemas';
import { type EditOutcome, RecordsService } from './records.service';

/** An edit's answer: the merged record with its ETag, or 202 when it is not merged yet. */
export function answerEdit(reply: FastifyReply, outcome: EditOutcome): RecordView | AcceptedEditView {
  if (!outcome.applied) {
    reply.status(HttpStatus.ACCEPTED);
    return { accepted: true, changeKey: outcome.changeKey };
  }
  reply.header('etag', `"${outcome.record.version}"`);
  return outcome.record;
}

/**
 * One controller class per collection, all from this one definition: Nest routes and
 * OpenAPI documents a class per path, so the entity type is fixed per class and the
 * behaviour is shared. Both roles may read.
 */
function recordsController(resource: RecordResource): Type<unknown> {
  @ApiTags('records')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Controller(`api/v1/${resource}`)
  class RecordsController {
    constructor(@Inject(RecordsService) readonly records: RecordsService) {}

    @ApiOkResponse({
      description: `Live ${RECORD_RESOURCES[resource]} records, by id.`,
      standardSchema: recordPage,
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST)
    @Get()
    list(
      @CurrentPrincipal() principal: Principal,
      @Query({ schema: listQueries[resource] }) query: ListQuery,
    ): Promise<RecordPage> {
      return this.records.list(principal, resource, query);
    }

    @ApiOkResponse({
      standardSchema: recordView,
      description:
        'The record; `ETag` carries its version. The id of a record merged into another answers as ' +
        'that one (its own `id`, and `Content-Location` naming it).',
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
    @Get(':id')
    async get(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<RecordView> {
      const record = await this.records.get(principal, resource, id);
      reply.header('etag', `"${record.version}"`);
      if (record.id !== id.toLowerCase())
        reply.header('content-location', `/api/v1/${resource}/${record.id}`);
      return record;
    }

    @ApiOkResponse({
      standardSchema: recordView,
      description:
        'The edit is merged as yours and on its way to every connected system; this is the record after it.',
    })
    @ApiAcceptedResponse({
      standardSchema: acceptedEdit,
      description: 'Accepted, not merged within 3 s (the sync stage is behind): read the record again later.',
    })
    @ApiHeader({ name: 'If-Match', required: false, description: 'The record version (`version`, `ETag`).' })
    @ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description: 'A retry with the same key is one edit.',
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.PRECONDITION_FAILED)
    @Patch(':id')
    async edit(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Body({ schema: editBody }) body: EditBody,
      @Headers('if-match') ifMatch: unknown,
      @Headers('idempotency-key') idempotencyKey: unknown,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<RecordView | AcceptedEditView> {
      const outcome = await this.records.edit(principal, resource, id, body, {
        ifMatch: header(ifMatchHeader, ifMatch, 'If-Match'),
        idempotencyKey: header(idempotencyKeyHeader, idempotencyKey, 'Idempotency-Key'),
      });
      return answerEdit(reply, outcome);
    }
  }
  // Distinct names keep Nest's injector and the OpenAPI operation ids apart.
  const name = `${resource.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()).replace(/^\w/, (c) => c.toUpperCase())}Controller`;
  Object.defineProperty(RecordsController, 'name', { value: name });
  return RecordsController;
}

export const RECORDS_CONTROLLERS = (Object.keys(RECORD_RESOURCES) as RecordResource[]).map(recordsController);
