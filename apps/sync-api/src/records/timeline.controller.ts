import { Controller, Get, HttpStatus, Inject, Param, Query, type Type } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  TIMELINE_RESOURCES,
  type TimelinePage,
  type TimelineQuery,
  type TimelineResource,
  timelinePage,
  timelineQuery,
} from './timeline.schemas';
import { RecordTimelineService } from './timeline.service';

/**
 * A record's activities, beside the collection's own routes, one class per collection as
 * there. Participants are resolved to people by email; a company's or deal's timeline is that
 * of its associated people (the CRMs' associations, and a company derived from a person's email
 * domain; see the record's `associations`). Both roles may read.
 */
function timelineController(resource: TimelineResource): Type<unknown> {
  @ApiTags('records')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Controller(`api/v1/${resource}`)
  class RecordTimelineController {
    constructor(@Inject(RecordTimelineService) readonly timelines: RecordTimelineService) {}

    @ApiOkResponse({
      standardSchema: timelinePage,
      description:
        (resource === 'people'
          ? 'Meetings and mails the person took part in, newest first, with their role in each. '
          : `Meetings and mails of the ${resource === 'companies' ? "company's" : "deal's"} people (its associations), newest first, with their roles in each. `) +
        'A merged-away id answers as its survivor, whose timeline includes the activities of every record merged into it. ' +
        'Tasks carry no participants in any source today, so `task` finds none.',
    })
    @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
    @Get(':id/timeline')
    list(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Query({ schema: timelineQuery }) query: TimelineQuery,
    ): Promise<TimelinePage> {
      return this.timelines.timeline(principal, resource, id, query);
    }
  }
  // Distinct names keep Nest's injector and the OpenAPI operation ids apart.
  const name = `${resource.replace(/^\w/, (c) => c.toUpperCase())}TimelineController`;
  Object.defineProperty(RecordTimelineController, 'name', { value: name });
  return RecordTimelineController;
}

export const TIMELINE_CONTROLLERS = TIMELINE_RESOURCES.map(timelineController);
