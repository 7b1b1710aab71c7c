import { Body, Controller, Get, Headers, HttpStatus, Inject, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { EntityType } from '@syncline/core';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { header } from '../common/headers';
import {
  entityTypeParam,
  ifMatchVersion,
  type PolicySetView,
  policySetView,
  type ReplacePoliciesBody,
  type RevisionPage,
  type RevisionsQuery,
  replacePoliciesBody,
  revisionPage,
  revisionsQuery,
} from './policies.schemas';
import { PoliciesService } from './policies.service';

const APPLIES =
  'A new set goes on the change log as it is saved: every change after it on the log is merged under it; ' +
  'values already merged and conflicts already recorded stay as they were until a replay ' +
  '(POST /api/v1/replays) rebuilds them under the new policy.';

/** Field merge policies per entity type. Both roles read them; admins replace them. */
@ApiTags('policies')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.BAD_REQUEST)
@Controller('api/v1/policies')
export class PoliciesController {
  constructor(@Inject(PoliciesService) private readonly policies: PoliciesService) {}

  @ApiOkResponse({
    description: `How the merge settles concurrent edits of each field of this type; \`ETag\` carries the set's version. ${APPLIES}`,
    standardSchema: policySetView,
  })
  @Get(':entityType')
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('entityType', { schema: entityTypeParam }) entityType: EntityType,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PolicySetView> {
    return withEtag(reply, await this.policies.get(principal, entityType));
  }

  @ApiOkResponse({
    description:
      `The set replaced as a whole (fields left out go back to \`lww\`), under the next version, kept ` +
      `as a revision and audited. ${APPLIES}`,
    standardSchema: policySetView,
  })
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description: "The set's version (`version`, `ETag`): replace only if nobody has since.",
  })
  @ApiErrorResponses(HttpStatus.FORBIDDEN, HttpStatus.PRECONDITION_FAILED)
  @Roles('admin')
  @Put(':entityType')
  async replace(
    @CurrentPrincipal() principal: Principal,
    @Param('entityType', { schema: entityTypeParam }) entityType: EntityType,
    @Body({ schema: replacePoliciesBody }) body: ReplacePoliciesBody,
    @Headers('if-match') ifMatch: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PolicySetView> {
    const expected = header(ifMatchVersion, ifMatch, 'If-Match');
    return withEtag(reply, await this.policies.replace(principal, entityType, body, expected));
  }

  @ApiOkResponse({ description: "The type's replaced sets, newest first.", standardSchema: revisionPage })
  @Get(':entityType/revisions')
  revisions(
    @CurrentPrincipal() principal: Principal,
    @Param('entityType', { schema: entityTypeParam }) entityType: EntityType,
    @Query({ schema: revisionsQuery }) query: RevisionsQuery,
  ): Promise<RevisionPage> {
    return this.policies.revisions(principal, entityType, query);
  }
}

function withEtag(reply: FastifyReply, view: PolicySetView): PolicySetView {
  reply.header('etag', `"${view.version}"`);
  return view;
}
