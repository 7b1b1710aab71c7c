import { Controller, Get, HttpStatus, Inject, Param, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  INSIGHTS_RESOURCES,
  type InsightsResource,
  type RecordInsights,
  recordInsights,
} from './insights.schemas';
import { RecordInsightsService } from './insights.service';

/**
 * A record's activity insights, beside the collection's own routes, one class per collection
 * (as the timeline's). Both roles may read.
 */
function insightsController(resource: InsightsResource): Type<unknown> {
  @ApiTags('records')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Controller(`api/v1/${resource}`)
  class RecordInsightsController {
    constructor(@Inject(RecordInsightsService) readonly insights: RecordInsightsService) {}

    @ApiOkResponse({
      standardSchema: recordInsights,
      description:
        'When we last talked, when we meet next, and how engagement moves over 7, 30 and 90 days, ' +
        'computed by Syncline in event time from the mails and meetings of every connected system, ' +
        'complete up to the workspace’s watermark. ' +
        (resource === 'people'
          ? ''
          : `A ${resource === 'companies' ? 'company' : 'deal'} counts each activity of its people once. `) +
        'A merged-away id answers as its survivor.',
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
    @Get(':id/insights')
    get(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
    ): Promise<RecordInsights> {
      return this.insights.of(principal, resource, id);
    }
  }
  // Distinct names keep Nest's injector and the OpenAPI operation ids apart.
  const name = `${resource.replace(/^\w/, (c) => c.toUpperCase())}InsightsController`;
  Object.defineProperty(RecordInsightsController, 'name', { value: name });
  return RecordInsightsController;
}

export const INSIGHTS_CONTROLLERS = INSIGHTS_RESOURCES.map(insightsController);
