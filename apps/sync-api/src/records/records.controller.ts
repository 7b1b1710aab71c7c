import { Controller, Get, HttpStatus, Inject, Param, Query, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  type ListQuery,
  listQueries,
  RECORD_RESOURCES,
  type RecordPage,
  type RecordResource,
  type RecordView,
  recordPage,
  recordView,
} from './records.schemas';
import { RecordsService } from './records.service';

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

    @ApiOkResponse({ standardSchema: recordView })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
    @Get(':id')
    get(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
    ): Promise<RecordView> {
      return this.records.get(principal, resource, id);
    }
  }
  // Distinct names keep Nest's injector and the OpenAPI operation ids apart.
  const name = `${resource.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()).replace(/^\w/, (c) => c.toUpperCase())}Controller`;
  Object.defineProperty(RecordsController, 'name', { value: name });
  return RecordsController;
}

export const RECORDS_CONTROLLERS = (Object.keys(RECORD_RESOURCES) as RecordResource[]).map(recordsController);
