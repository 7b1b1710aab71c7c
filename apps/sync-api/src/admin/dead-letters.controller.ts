import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import {
  type BulkDeadLettersBody,
  type BulkDeadLettersView,
  bulkDeadLettersBody,
  bulkDeadLettersView,
  type DeadLetterDetailView,
  type DeadLetterListQuery,
  type DeadLetterPage,
  deadLetterDetailView,
  deadLetterListQuery,
  deadLetterPage,
  type RetriedView,
  retriedView,
} from './dead-letters.schemas';
import { DeadLettersService } from './dead-letters.service';

const NOT_OPEN = 'The letter is not open (already retried or discarded): `conflict`.';

@ApiTags('dead-letters')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/dead-letters')
export class DeadLettersController {
  constructor(@Inject(DeadLettersService) private readonly deadLetters: DeadLettersService) {}

  @ApiOkResponse({
    description: 'Work that failed for good, newest first.',
    standardSchema: deadLetterPage,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: deadLetterListQuery }) query: DeadLetterListQuery,
  ): Promise<DeadLetterPage> {
    return this.deadLetters.list(principal, query);
  }

  @ApiOkResponse({
    description:
      'Each letter retried or discarded as its own route does (its own transaction and audit entry), in ' +
      'the order given; a letter that cannot be settled is reported with why, and the others go on.',
    standardSchema: bulkDeadLettersView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @HttpCode(HttpStatus.OK)
  @Post('bulk')
  bulk(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: bulkDeadLettersBody }) body: BulkDeadLettersBody,
  ): Promise<BulkDeadLettersView> {
    return this.deadLetters.bulk(principal, body);
  }

  @ApiOkResponse({ description: 'The letter with what failed.', standardSchema: deadLetterDetailView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<DeadLetterDetailView> {
    return this.deadLetters.get(principal, id);
  }

  @ApiOkResponse({
    description:
      'Redone and marked `retried`: a `log` event is appended to the change log again under ' +
      '`<event key>#retry-<n>`; the failed outbox rows of a `push` are set back to pending.',
    standardSchema: retriedView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description: `${NOT_OPEN} Also when its source cannot be retried (only \`log\` and \`push\` can), or its event is refused again.`,
    standardSchema: apiErrorBody,
  })
  @HttpCode(HttpStatus.OK)
  @Post(':id/retry')
  retry(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<RetriedView> {
    return this.deadLetters.retry(principal, id);
  }

  @ApiOkResponse({
    description: 'Marked `discarded`; nothing is redone.',
    standardSchema: deadLetterDetailView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiResponse({ status: HttpStatus.CONFLICT, description: NOT_OPEN, standardSchema: apiErrorBody })
  @HttpCode(HttpStatus.OK)
  @Post(':id/discard')
  discard(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<DeadLetterDetailView> {
    return this.deadLetters.discard(principal, id);
  }
}
