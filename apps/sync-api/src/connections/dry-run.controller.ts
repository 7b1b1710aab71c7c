import { Controller, Get, HttpCode, HttpStatus, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import { type ConnectionView, connectionView } from './connections.schemas';
import {
  type DryRunComputingView,
  type DryRunQuery,
  type DryRunReportView,
  dryRunComputingView,
  dryRunQuery,
  dryRunReportView,
} from './dry-run.schemas';
import { DryRunService } from './dry-run.service';

const DISCONNECTED = '`connection_disconnected`: the connection was disconnected, for good.';

/** The dry run of a connection made with `"dryRun": true` (see POST /api/v1/connections). */
@ApiTags('connections')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/connections')
export class DryRunController {
  constructor(@Inject(DryRunService) private readonly dryRuns: DryRunService) {}

  @ApiOkResponse({
    description:
      'What enabling the connection would do: which of its records would link to which unified records, the ' +
      'records it would create, the field changes (old → new), the conflicts and the writes to every ' +
      'connected system. Computed by the workers, with the sync stage itself over what its backfill has read, ' +
      'in a transaction that is rolled back: nothing is written anywhere but the report. The stored report is ' +
      'answered until the backfill moves on (or `refresh=true`); then the request waits up to 2 s for the new ' +
      'one, else answers the stored one with `stale: true`. While it is still backfilling (`complete: false`) ' +
      'the report covers what was read so far.',
    standardSchema: dryRunReportView,
  })
  @ApiAcceptedResponse({
    description:
      'No report yet: the workers are computing the first one (or their last try failed: `lastFailure`). ' +
      'Ask again after `Retry-After` seconds.',
    standardSchema: dryRunComputingView,
  })
  @ApiResponse({
    status: HttpStatus.NOT_FOUND,
    description: 'No such connection in this workspace, or it is not in dry run (never was, or was enabled).',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({ status: HttpStatus.CONFLICT, description: DISCONNECTED, standardSchema: apiErrorBody })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description:
      '`unavailable`: there is no report yet and work cannot be queued (Redis away); try again shortly.',
    standardSchema: apiErrorBody,
  })
  @Get(':id/dry-run')
  async report(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Query({ schema: dryRunQuery }) query: DryRunQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DryRunReportView | DryRunComputingView> {
    const answer = await this.dryRuns.report(principal, id, query);
    if (answer.kind === 'report') return answer.report;
    reply.status(HttpStatus.ACCEPTED).header('retry-after', String(answer.body.retryAfterSeconds));
    return answer.body;
  }

  @ApiOkResponse({
    description:
      'Out of dry run: what it staged goes onto the change log (under its event keys, so nothing twice) and ' +
      'from now on it syncs like any connection: its records are linked and merged and every system is ' +
      'written what it is owed. Enabling a connection not in dry run answers it as it is.',
    standardSchema: connectionView,
  })
  @ApiErrorResponses(HttpStatus.NOT_FOUND)
  @ApiResponse({ status: HttpStatus.CONFLICT, description: DISCONNECTED, standardSchema: apiErrorBody })
  @HttpCode(HttpStatus.OK)
  @Post(':id/enable')
  enable(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<ConnectionView> {
    return this.dryRuns.enable(principal, id);
  }
}
