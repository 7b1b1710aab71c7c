import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Query,
  Res,
  type Type,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import { header } from '../common/headers';
import { RECORD_RESOURCES, type RecordView, recordView } from '../records/records.schemas';
import {
  type AcceptedOperationView,
  acceptedOperation,
  type IdentityOperationPage,
  type IdentityOperationQuery,
  type IdentityOperationView,
  identityOperationPage,
  identityOperationQuery,
  identityOperationView,
  MERGE_RESOURCES,
  type MergeBody,
  type MergeResource,
  mergeBody,
  operationKeyHeader,
  type PossibleDuplicatePage,
  type PossibleDuplicateQuery,
  type PossibleDuplicateView,
  possibleDuplicatePage,
  possibleDuplicateQuery,
  possibleDuplicateView,
  type UnmergedView,
  unmergedView,
} from './identity-review.schemas';
import { IdentityReviewService, type OperationOutcome } from './identity-review.service';

const ACCEPTED =
  'On the change log, not applied within 3 s (the sync stage is behind): follow it with ' +
  'GET /api/v1/identity-operations/{operationId}.';

const KEY_HEADER = {
  name: 'Idempotency-Key',
  required: false,
  description: 'A retry with the same key is one operation.',
} as const;

const conflict = (description: string) =>
  ApiResponse({ status: HttpStatus.CONFLICT, description, standardSchema: apiErrorBody });
const badRequest = (description: string) =>
  ApiResponse({ status: HttpStatus.BAD_REQUEST, description, standardSchema: apiErrorBody });

/** 200 with the result (its operation in `Operation-Id`), or 202 with the operation id. */
function answer<T>(reply: FastifyReply, outcome: OperationOutcome<T>): T | AcceptedOperationView {
  reply.header('operation-id', outcome.operationId);
  if (!outcome.applied) {
    reply.status(HttpStatus.ACCEPTED);
    return { accepted: true, operationId: outcome.operationId };
  }
  return outcome.value;
}

const OPERATION_HEADER = {
  'Operation-Id': {
    description: 'The identity operation (undo a merge with it).',
    schema: { type: 'string' },
  },
} as const;

/**
 * The review inbox: pairs of records identity found alike but not sure enough to merge, each
 * with both records, the evidence and the score. A salesperson merges a pair (the merge
 * route of its collection) or dismisses it (not the same: never suggested again).
 */
@ApiTags('identity-review')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/possible-duplicates')
export class PossibleDuplicatesController {
  constructor(@Inject(IdentityReviewService) private readonly review: IdentityReviewService) {}

  @ApiOkResponse({ standardSchema: possibleDuplicatePage, description: 'Newest first.' })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: possibleDuplicateQuery }) query: PossibleDuplicateQuery,
  ): Promise<PossibleDuplicatePage> {
    return this.review.duplicates(principal, query);
  }

  @ApiOkResponse({ standardSchema: possibleDuplicateView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':id')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<PossibleDuplicateView> {
    return this.review.duplicate(principal, id);
  }

  @ApiOkResponse({
    standardSchema: possibleDuplicateView,
    description: 'Dismissed (or already): recorded with your key, and the pair is never suggested again.',
  })
  @ApiAcceptedResponse({
    standardSchema: possibleDuplicateView,
    description:
      'On the change log, not applied within 3 s (the sync stage is behind): the pair as it stands, ' +
      'still open; GET /api/v1/possible-duplicates/{id} follows it.',
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @conflict('The pair was merged (`already_merged`): undo the merge instead.')
  @HttpCode(HttpStatus.OK)
  @Post(':id/dismiss')
  async dismiss(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PossibleDuplicateView> {
    const outcome = await this.review.dismiss(principal, id);
    if (!outcome.applied) reply.status(HttpStatus.ACCEPTED);
    return outcome.value;
  }
}

/** Identity operations (merges and unmerges) as the change log carries them; an applied merge can be undone. */
@ApiTags('identity-review')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/identity-operations')
export class IdentityOperationsController {
  constructor(@Inject(IdentityReviewService) private readonly review: IdentityReviewService) {}

  @ApiOkResponse({ standardSchema: identityOperationPage, description: 'Applied operations, newest first.' })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: identityOperationQuery }) query: IdentityOperationQuery,
  ): Promise<IdentityOperationPage> {
    return this.review.operations(principal, query);
  }

  @ApiOkResponse({ standardSchema: identityOperationView })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get(':operationId')
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('operationId', { schema: z.uuid() }) operationId: string,
  ): Promise<IdentityOperationView> {
    return this.review.operation(principal, operationId);
  }

  @ApiOkResponse({
    standardSchema: unmergedView,
    headers: OPERATION_HEADER,
    description:
      'Undone: the absorbed record is a record of its own again, with the systems it had, and each ' +
      "record's systems are owed its own values (what only the other had is cleared).",
  })
  @ApiAcceptedResponse({ standardSchema: acceptedOperation, description: ACCEPTED })
  @ApiHeader(KEY_HEADER)
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @ApiResponse({
    status: HttpStatus.NOT_FOUND,
    description: 'No such merge operation in this workspace.',
    standardSchema: apiErrorBody,
  })
  @conflict(
    'Already undone (`already_undone`); not a merge (`not_a_merge`); not applied yet (`not_applied`); or the ' +
      'survivor has since been merged into another record (`merged_since`: undo that merge first).',
  )
  @HttpCode(HttpStatus.OK)
  @Post(':operationId/unmerge')
  async unmerge(
    @CurrentPrincipal() principal: Principal,
    @Param('operationId', { schema: z.uuid() }) operationId: string,
    @Headers('idempotency-key') idempotencyKey: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UnmergedView | AcceptedOperationView> {
    const key = header(operationKeyHeader, idempotencyKey, 'Idempotency-Key');
    return answer(reply, await this.review.unmerge(principal, operationId, key));
  }
}

/** `POST /api/v1/{resource}/{id}/merge`, one class per collection (Nest documents a class per path). */
function mergeController(resource: MergeResource): Type<unknown> {
  const entityType = RECORD_RESOURCES[resource];

  @ApiTags('identity-review')
  @ApiBearerAuth()
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED)
  @Controller(`api/v1/${resource}`)
  class MergeController {
    constructor(@Inject(IdentityReviewService) readonly review: IdentityReviewService) {}

    @ApiOkResponse({
      standardSchema: recordView,
      headers: OPERATION_HEADER,
      description:
        `Merged: this ${entityType} now carries the other's systems and values (a field both had is settled ` +
        "by its policy), every system is owed the union, and the other's id reads as this record. A copy " +
        'Syncline had made of one of the two in a CRM that has the other is archived there. ' +
        'Undo with POST /api/v1/identity-operations/{operationId}/unmerge, the id in `Operation-Id` (also listed by ' +
        'GET /api/v1/identity-operations?recordId=…).',
    })
    @ApiAcceptedResponse({ standardSchema: acceptedOperation, description: ACCEPTED })
    @ApiHeader(KEY_HEADER)
    @badRequest(
      'Invalid input (`validation_failed`), the record itself (`same_record`), or a record of another type ' +
        '(`type_mismatch`).',
    )
    @ApiResponse({
      status: HttpStatus.NOT_FOUND,
      description: `No such ${entityType} (this one, or \`absorbedId\`) in this workspace.`,
      standardSchema: apiErrorBody,
    })
    @conflict('One of the two was merged into another record already (`already_merged`).')
    @HttpCode(HttpStatus.OK)
    @Post(':id/merge')
    async merge(
      @CurrentPrincipal() principal: Principal,
      @Param('id', { schema: z.uuid() }) id: string,
      @Body({ schema: mergeBody }) body: MergeBody,
      @Headers('idempotency-key') idempotencyKey: unknown,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<RecordView | AcceptedOperationView> {
      const key = header(operationKeyHeader, idempotencyKey, 'Idempotency-Key');
      const outcome = await this.review.merge(principal, resource, id, body.absorbedId, key);
      if (outcome.applied) reply.header('etag', `"${outcome.value.version}"`);
      return answer(reply, outcome);
    }
  }
  const name = `${resource.replace(/^\w/, (c) => c.toUpperCase())}MergeController`;
  Object.defineProperty(MergeController, 'name', { value: name });
  return MergeController;
}

export const MERGE_CONTROLLERS = MERGE_RESOURCES.map(mergeController);
