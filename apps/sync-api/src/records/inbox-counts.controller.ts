import { Controller, Get, HttpStatus, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Pool } from 'pg';
import { z } from 'zod';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { READ_POOL } from '../infra/database.module';

export const inboxCounts = z.object({
  openConflicts: z.number().int().describe('Conflicts waiting for a person (GET /conflicts?status=open).'),
  openDuplicates: z
    .number()
    .int()
    .describe('Possible duplicates waiting for review (GET /possible-duplicates?status=open).'),
});
export type InboxCounts = z.output<typeof inboxCounts>;

/** What waits for a person, counted for the app's navigation: one cheap read both roles make often. */
@ApiTags('conflicts')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/inbox-counts')
export class InboxCountsController {
  constructor(@Inject(READ_POOL) private readonly pool: Pool) {}

  @ApiOkResponse({ standardSchema: inboxCounts, description: 'Open conflicts and possible duplicates.' })
  @Get()
  async counts(@CurrentPrincipal() principal: Principal): Promise<InboxCounts> {
    const { rows } = await this.pool.query<{ conflicts: string; duplicates: string }>({
      name: 'inbox-counts',
      text: `SELECT (SELECT count(*) FROM merge_conflict WHERE workspace_id = $1 AND status = 'open') AS conflicts,
                    (SELECT count(*) FROM possible_duplicate WHERE workspace_id = $1 AND status = 'open') AS duplicates`,
      values: [principal.workspaceId],
    });
    return {
      openConflicts: Number(rows[0]?.conflicts ?? 0),
      openDuplicates: Number(rows[0]?.duplicates ?? 0),
    };
  }
}
