import { Controller, Get, HttpStatus, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { type PersonInsights, personInsights } from './insights.schemas';
import { RecordInsightsService } from './insights.service';

/** A person's activity insights, beside the people collection's own routes. Both roles may read. */
@ApiTags('records')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/people')
export class PersonInsightsController {
  constructor(@Inject(RecordInsightsService) readonly insights: RecordInsightsService) {}

  @ApiOkResponse({
    standardSchema: personInsights,
    description:
      'When we last talked, when we meet next, and how engagement moves over 7, 30 and 90 days, ' +
      'computed by Syncline in event time from the mails and meetings of every connected system, ' +
      'complete up to the workspace’s watermark. A merged-away id answers as its survivor.',
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':id/insights')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<PersonInsights> {
    return this.insights.person(principal, id);
  }
}
