import { Controller, Get, HttpStatus, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { findSuspectEntities } from '@syncline/identity';
import type { Pool } from 'pg';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { READ_POOL } from '../infra/database.module';
import {
  type IdentityCheckQuery,
  type IdentityCheckView,
  identityCheckQuery,
  identityCheckView,
} from './identity-check.schemas';

/**
 * The check over a workspace for wrong merges: records that hold two records of one CRM, two
 * values of a key that names one thing, or a person's names of two people, each with what would
 * take it apart (the merges to undo, or a replay under today's rules). Part of the review inbox.
 */
@ApiTags('identity-review')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/identity-check')
export class IdentityCheckController {
  constructor(@Inject(READ_POOL) private readonly pool: Pool) {}

  @ApiOkResponse({
    standardSchema: identityCheckView,
    description:
      'Suspect records, most suspect first: two records of one connection, then conflicting keys, then names.',
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  async check(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: identityCheckQuery }) query: IdentityCheckQuery,
  ): Promise<IdentityCheckView> {
    const suspects = await findSuspectEntities(this.pool, principal.workspaceId, query.entityType);
    return { data: suspects.slice(0, query.limit), total: suspects.length };
  }
}
