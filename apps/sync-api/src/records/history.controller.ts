import { Controller, Get, HttpStatus, Inject, Param, Query, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import {
  type AsOfQuery,
  type AsOfView,
  asOfQuery,
  asOfView,
  type HistoryPage,
  type HistoryQuery,
  historyPage,
  historyQuery,
} from './history.schemas';
import { RecordHistoryService } from './history.service';
import { RECORD_RESOURCES, type RecordResource } from './records.schemas';

/**
 * A record's past, beside the collection's own routes (records.controller.ts): one class per
 * collection for the same reason as there. Both roles may read.
 */
function historyController(resource: RecordResource): Type<unknown> {
  @ApiTags('records')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Controller(`api/v1/${resource}`)
  class RecordHistoryController {
    constructor(@Inject(RecordHistoryService) readonly history: RecordHistoryService) {}

    @ApiOkResponse({
      standardSchema: historyPage,
      description: `The ${RECORD_RESOURCES[resource]}'s changes, newest first: when, from which connection or person, which fields to which values, and whether it settled a conflict.`,
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
    @Get(':id/history')
    list(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Query({ schema: historyQuery }) query: HistoryQuery,
    ): Promise<HistoryPage> {
      return this.history.history(principal, resource, id, query);
    }

    @ApiOkResponse({
      standardSchema: asOfView,
      description: `The ${RECORD_RESOURCES[resource]}'s fields and provenance as they were at \`at\`.`,
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST)
    @ApiResponse({
      status: HttpStatus.NOT_FOUND,
      description:
        'No such record in this workspace (`not_found`), or it did not exist yet at that time (`not_yet_existing`).',
      standardSchema: apiErrorBody,
    })
    @Get(':id/as-of')
    asOf(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Query({ schema: asOfQuery }) query: AsOfQuery,
    ): Promise<AsOfView> {
      return this.history.asOf(principal, resource, id, new Date(query.at));
    }
  }
  // Distinct names keep Nest's injector and the OpenAPI operation ids apart.
  const name = `${resource.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()).replace(/^\w/, (c) => c.toUpperCase())}HistoryController`;
  Object.defineProperty(RecordHistoryController, 'name', { value: name });
  return RecordHistoryController;
}

export const HISTORY_CONTROLLERS = (Object.keys(RECORD_RESOURCES) as RecordResource[]).map(historyController);
