import { Controller, Get, HttpStatus, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  type SyncHealthHistoryQuery,
  type SyncHealthHistoryView,
  type SyncHealthView,
  syncHealthHistoryQuery,
  syncHealthHistoryView,
  syncHealthView,
} from './sync-health.schemas';
import { SyncHealthService } from './sync-health.service';

@ApiTags('sync-health')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/health')
export class SyncHealthController {
  constructor(@Inject(SyncHealthService) private readonly health: SyncHealthService) {}

  @ApiOkResponse({
    description:
      "Each provider connection's progress, lag behind the merge and writes waiting to go out, " +
      "and the workspace's open dead letters.",
    standardSchema: syncHealthView,
  })
  @Get('sync')
  check(@CurrentPrincipal() principal: Principal): Promise<SyncHealthView> {
    return this.health.check(principal);
  }

  @ApiOkResponse({
    description:
      "Sync health over the last hours, from the workers' samples (every minute): per connection its " +
      'lag, watermark delay, pending writes and writes sent and refused by error code, and the ' +
      "workspace's consumer lag, merged into at most 300 points a series.",
    standardSchema: syncHealthHistoryView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @Get('sync/history')
  history(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: syncHealthHistoryQuery }) query: SyncHealthHistoryQuery,
  ): Promise<SyncHealthHistoryView> {
    return this.health.history(principal, query);
  }
}
