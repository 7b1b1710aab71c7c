import { Controller, Get, HttpStatus, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { type SyncHealthView, syncHealthView } from './sync-health.schemas';
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
}
